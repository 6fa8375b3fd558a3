import sys

from tf_memlint.cli import main

sys.exit(main())

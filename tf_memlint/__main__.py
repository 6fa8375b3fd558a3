from tf_memlint.cli import console

console()

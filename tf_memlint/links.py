"""Where a rule's page is, for the findings' links (JSON ``url``, SARIF ``helpUri``).

The project has no public web address, so none is invented: by default a link is the page this
installation ships (``file:///.../rules/TFM404.md``, the text ``tf-memlint explain TFM404``
prints). A team that hosts the pages sets ``rule-url-base`` (config key, or ``--rule-url-base``):
``https://git.example.com/ml/tf-memlint/blob/main/rules`` gives ``.../rules/TFM404.md``; a base
holding ``{code}`` or ``{name}`` is filled in instead (``https://wiki.example.com/lint/{name}``).
"""

from __future__ import annotations

from tf_memlint.resources import rule_page
from tf_memlint.rule import all_rules


def rule_url(code: str, base: str | None = None) -> str:
    if not base:
        return rule_page(code).resolve().as_uri()
    if "{code}" in base or "{name}" in base:
        rule = all_rules().get(code)
        return base.replace("{code}", code).replace("{name}", rule.name if rule else code)
    return f"{base.rstrip('/')}/{code}.md"

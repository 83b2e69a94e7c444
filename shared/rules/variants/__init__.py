"""The variants of Canasta, one ruleset each (docs/rules.md §3): a ``Ruleset`` subclass that
answers classic's hooks (``shared.rules.ruleset``) with its own rules, registered by name.

* ``cutthroat``: three-handed cutthroat's sides (§3.2);
* ``samba``: Samba and Bolivia (§3.4, §3.5, §3.8a), a package: its melds, its going-out
  search, its ruleset;
* ``hand_and_foot``: Hand and Foot (§3.7, §3.8a), built on Samba's further melds;
* ``modern_american``: Modern American Canasta (§3.6, §3.8a).

Importing this package registers them all; ``shared.rules`` does so, so every entry point
finds every ruleset. A variant imports the classic modules it builds on; no classic module
imports a variant.
"""

from . import cutthroat, hand_and_foot, modern_american, samba

__all__ = ["cutthroat", "hand_and_foot", "modern_american", "samba"]

"""Which licences let a paper's text ship with an item (sources/licences.py), written out by hand."""

from __future__ import annotations

import pytest

from theorembench.sources.licences import licence_info

CASES = [
    ("http://creativecommons.org/licenses/by/4.0/", "CC BY 4.0", True),
    ("https://creativecommons.org/licenses/by-sa/4.0", "CC BY-SA 4.0", True),
    ("http://creativecommons.org/licenses/by-nc-sa/4.0/", "CC BY-NC-SA 4.0", True),
    ("http://creativecommons.org/licenses/by-nc-nd/4.0/", "CC BY-NC-ND 4.0", True),
    ("http://creativecommons.org/licenses/by/3.0/", "CC BY 3.0", True),
    ("http://creativecommons.org/publicdomain/zero/1.0/", "CC0 1.0", True),
    ("http://creativecommons.org/licenses/by-nc/4.0/", "CC BY-NC 4.0", True),
    ("http://creativecommons.org/licenses/by-nd/4.0/", "CC BY-ND 4.0", True),
    ("HTTPS://www.CreativeCommons.org/licenses/by/4.0//", "CC BY 4.0", True),
    ("https://creativecommons.org/publicdomain/zero/1.0", "CC0 1.0", True),
    ("http://creativecommons.org/publicdomain/mark/1.0/", "Public Domain Mark", True),
    ("http://arxiv.org/licenses/assumed-1991-2003/", "unknown", False),
    ("http://creativecommons.org/licenses/by/4.0.evil.example/", "unknown", False),
    ("http://arxiv.org/licenses/nonexclusive-distrib/1.0/", "arXiv non-exclusive", False),
    ("https://arxiv.org/licenses/nonexclusive-distrib/1.0", "arXiv non-exclusive", False),
    ("http://example.org/my-licence", "unknown", False),
    ("", "unknown", False),
    (None, "unknown", False),
]


@pytest.mark.parametrize(("url", "name", "ships"), CASES)
def test_licence_names_and_whether_the_text_may_ship(url, name, ships):
    info = licence_info(url)
    assert (info.name, info.redistributable) == (name, ships)

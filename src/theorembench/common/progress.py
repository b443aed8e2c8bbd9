"""The two progress callbacks every service reports through, named once.

- :data:`OnStep` ``(key, stage, status)``: a build's step ended, or was found stored (``ok``,
  ``rejected`` or ``failed``). The step runner calls it for every step, so every build
  (LMB, Proof2Hybrid, EternalMath) reports the same events; EternalMath's build also reports
  stage ``paper`` once per paper.
- :data:`OnCount` ``(done, total)``: how many of an evaluation's (or another loop's) samples are
  done. The sample loop calls it, and so do the other loops with a known total (IMProofBench's
  conversations, a platform job, the answer checker's corpus).

A command draws its progress bar from one of them; a service never prints.
"""

from __future__ import annotations

from collections.abc import Callable

OnStep = Callable[[str, str, str], None]
OnCount = Callable[[int, int], None]

__all__ = ["OnCount", "OnStep"]

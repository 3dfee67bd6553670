"""The cyclic garbage collector held off while a command starts.

Start-up is imports, the config, the quiz and the store: millions of objects that live to the end
and no garbage cycle worth a collection, yet the collector walked them all again and again — a
headless run against a fast judge spent 45-60 ms in it, 15-20 ms of it in one full collection
before its first request (``docs/speed.md``). :func:`main <quiztui.cli.main>` holds the collector
off; :func:`release` turns it on again once the command's real work begins (the run's first
requests on the wire, a TUI about to open, any other command before it runs) and first moves
what is alive out of its reach (``gc.freeze``), so it walks only what the work makes;
:func:`settle` does that again after more lasting objects were made (a run's report modules).
While the command works, the young generation is collected every :data:`YOUNG` allocations
rather than every 700. :func:`restore` undoes it all when ``main`` returns (tests call ``main`` in
their own process).
"""

from __future__ import annotations

import gc

_held = [False]
# The young generation's threshold while a command works: a streamed reply makes some 10,000
# tracked objects (its events' dicts, the tokens and their alternatives) that live until its
# batch is stored, and at the default 700 a 400-question headless vet ran 170 collections, 20
# ms of CPU; at 5,000, 25 and 8-11 ms (Python 3.12 raised its own default to 2,000).
YOUNG = 5000
_thresholds: list[tuple[int, int, int]] = []


def hold() -> None:
    """Hold the collector off (when it was on) until :func:`release` or :func:`restore`."""
    if gc.isenabled():
        gc.disable()
        _held[0] = True


def release() -> None:
    """The collector back on, for what the command makes from now on (not what lives already)."""
    if _held[0]:
        _held[0] = False
        gc.freeze()
        young, *older = gc.get_threshold()
        if young < YOUNG:
            _thresholds.append(gc.get_threshold())
            gc.set_threshold(YOUNG, *older)
        gc.enable()


def settle() -> None:
    """What lives now (modules loaded while the judge works) out of the collector's reach too."""
    if gc.isenabled():
        gc.freeze()


def restore() -> None:
    """The collector as it was before :func:`hold`: on, walking every object."""
    release()
    gc.unfreeze()
    if _thresholds:
        gc.set_threshold(*_thresholds.pop())

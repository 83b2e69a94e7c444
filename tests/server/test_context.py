"""The event loop's per-match locks (``server.context.AsyncMatchLocks``): moves of one match
take turns, moves of different matches never wait for each other, and a match's lock is
forgotten once nobody holds or wants it (a server sees thousands of matches)."""

from __future__ import annotations

import asyncio

from server.context import AsyncMatchLocks


def test_moves_of_one_match_take_turns_and_the_lock_is_forgotten() -> None:
    locks = AsyncMatchLocks()
    order: list[str] = []

    async def move(match_id: str, name: str, hold: float) -> None:
        async with locks.hold(match_id):
            order.append(f"{name} in")
            await asyncio.sleep(hold)
            order.append(f"{name} out")

    async def main() -> None:
        await asyncio.gather(move("m1", "a", 0.05), move("m1", "b", 0.0))

    asyncio.run(main())
    assert order == ["a in", "a out", "b in", "b out"]
    assert locks._locks == {}


def test_different_matches_do_not_wait_for_each_other() -> None:
    locks = AsyncMatchLocks()
    order: list[str] = []

    async def move(match_id: str, hold: float) -> None:
        async with locks.hold(match_id):
            order.append(f"{match_id} in")
            await asyncio.sleep(hold)
            order.append(f"{match_id} out")

    async def main() -> None:
        await asyncio.gather(move("m1", 0.05), move("m2", 0.0))

    asyncio.run(main())
    assert order == ["m1 in", "m2 in", "m2 out", "m1 out"]
    assert locks._locks == {}


def test_a_cancelled_waiter_leaves_no_lock_behind() -> None:
    locks = AsyncMatchLocks()

    async def main() -> None:
        async with locks.hold("m1"):
            waiter = asyncio.ensure_future(_enter(locks, "m1"))
            await asyncio.sleep(0.01)
            waiter.cancel()
            await asyncio.gather(waiter, return_exceptions=True)
            assert locks._locks["m1"][1] == 1  # only the holder is left

    asyncio.run(main())
    assert locks._locks == {}


async def _enter(locks: AsyncMatchLocks, match_id: str) -> None:
    async with locks.hold(match_id):
        pass

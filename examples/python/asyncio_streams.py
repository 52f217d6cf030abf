"""hev2.aio: the race runs in libhev2, the event loop only watches an fd.

    PYTHONPATH=bindings/python/src /usr/bin/python3 examples/python/asyncio_streams.py
"""

import asyncio
import time

import hev2.aio
from loopback_demo import NAME, broken_ipv6_server


async def main(port: int, hosts: dict) -> None:
    ticks = 0

    async def ticker() -> None:  # shows that the loop is never blocked
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    t = asyncio.create_task(ticker())
    start = time.monotonic()
    reader, writer = await hev2.aio.open_connection(NAME, port, hosts=hosts)
    print(f"connected to {writer.get_extra_info('peername')[0]} in {(time.monotonic() - start) * 1000:.0f} ms,"
          f" the ticker ran {ticks} times meanwhile; got {await reader.readline()!r}")
    writer.close()
    await writer.wait_closed()

    # Cancelling a pending connection (a timeout from asyncio.wait_for here)
    # cancels the race and closes everything it opened.
    try:
        await asyncio.wait_for(hev2.aio.open_connection("::1", port), 0.2)
    except TimeoutError:
        print("wait_for cancelled a pending connection; nothing is left open")
    t.cancel()


with broken_ipv6_server() as (port, hosts):
    asyncio.run(main(port, hosts))

#!/usr/bin/env python3
"""aiocoap's client observing a resource for coapcc's interoperability tests: prints the
response and each notification as `KIND CODE OBSERVE PAYLOAD`, for SECONDS, then cancels.
Usage: aiocoap_observe.py URI SECONDS"""
import asyncio
import sys

from aiocoap import GET, Context, Message


async def main(uri, secs):
    ctx = await Context.create_client_context()
    pr = ctx.request(Message(code=GET, uri=uri, observe=0))
    first = await pr.response
    print("response", first.code, first.opt.observe, first.payload.decode(), flush=True)

    async def follow():
        async for r in pr.observation:
            print("notification", r.code, r.opt.observe, r.payload.decode(), flush=True)

    try:
        await asyncio.wait_for(follow(), secs)
    except asyncio.TimeoutError:
        pass
    pr.observation.cancel()
    await ctx.shutdown()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], float(sys.argv[2])))

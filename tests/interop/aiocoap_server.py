#!/usr/bin/env python3
"""An aiocoap server for coapcc's interoperability tests: /test answers the reference
workload's 60-byte payload, /echo echoes POST/PUT payloads, /count is observable (a counter
notified every 0.5 s). Usage: aiocoap_server.py PORT"""
import asyncio
import sys

import aiocoap
import aiocoap.resource as resource

PAYLOAD = b"x" * 60


class Test(resource.Resource):
    async def render_get(self, request):
        return aiocoap.Message(payload=PAYLOAD)


class Echo(resource.Resource):
    async def render_post(self, request):
        return aiocoap.Message(code=aiocoap.CHANGED, payload=request.payload)

    async def render_put(self, request):
        return aiocoap.Message(code=aiocoap.CHANGED, payload=request.payload)


class Count(resource.ObservableResource):
    def __init__(self):
        super().__init__()
        self.n = 0
        asyncio.get_event_loop().call_later(0.5, self.tick)

    def tick(self):
        self.n += 1
        self.updated_state()
        asyncio.get_event_loop().call_later(0.5, self.tick)

    async def render_get(self, request):
        return aiocoap.Message(payload=str(self.n).encode())


async def main(port):
    root = resource.Site()
    root.add_resource(["test"], Test())
    root.add_resource(["echo"], Echo())
    root.add_resource(["count"], Count())
    await aiocoap.Context.create_server_context(root, bind=("127.0.0.1", port))
    print("ready", flush=True)
    await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))

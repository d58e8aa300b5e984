"""The verifier's HTTP face (design §6: "it runs as a service with a CLI").

`app` builds the ASGI application, `server` runs it on granian after start-up recovery. Every
rule here is about the edge of the network (who is calling, how much they may send, how long they
may take); the verdict itself is always `verifier.pipeline.submit.submit`.
"""

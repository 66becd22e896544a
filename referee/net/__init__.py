"""The only package that touches ZeroMQ sockets and bot processes.

``transport`` drives the ROUTER socket from the event loop, ``router_socket`` opens it (options,
endpoints, monitor), ``types`` holds its plain data, ``process`` starts bot processes in their
own process groups and kills them with every descendant.
"""

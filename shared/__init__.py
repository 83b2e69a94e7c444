"""The package shared by the Canasta server and client.

``shared.rules`` is the pure rules engine (standard library only); ``shared.pb`` holds the
generated protobuf/gRPC code; ``shared.wire`` converts between the two.
"""

"""Generated protobuf and gRPC code for the wire contract in ``proto/shared/pb/canasta.proto``.

Do not edit the ``canasta_pb2*`` files by hand: run ``make proto`` (``python -m
shared.pb.generate``) and commit the result; ``tests/test_generated_code.py`` fails on drift.
"""

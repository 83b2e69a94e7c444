"""The committed ``shared/pb`` code is exactly what ``make proto`` generates from ``proto/``."""

from pathlib import Path

from shared.pb.generate import GENERATED, REPO_ROOT, generate


def test_generated_code_matches_proto(tmp_path: Path) -> None:
    written = generate(tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in written) == sorted(GENERATED)
    stale = [
        name
        for name in GENERATED
        if (tmp_path / name).read_bytes() != (REPO_ROOT / name).read_bytes()
    ]
    assert not stale, f"shared/pb is out of date with proto/: run `make proto` ({stale})"


def test_generated_modules_import_as_a_package() -> None:
    from shared.pb import canasta_pb2, canasta_pb2_grpc

    assert canasta_pb2.DESCRIPTOR.package == "canasta.v1"
    assert canasta_pb2.DESCRIPTOR.name == "shared/pb/canasta.proto"
    assert hasattr(canasta_pb2_grpc, "CanastaStub")

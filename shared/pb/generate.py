"""Regenerate ``shared/pb`` from ``proto/``: ``python -m shared.pb.generate [OUT_DIR]``.

Runs grpcio-tools' bundled protoc with the standard Python and gRPC generators plus
mypy-protobuf's typed stubs (``.pyi`` for both modules). The proto's path under ``proto/``
mirrors the package, so generated imports read ``from shared.pb import canasta_pb2``. The output
embeds the generator versions, which is why ``grpcio-tools`` and ``mypy-protobuf`` are pinned
exactly in the dev extras.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
PROTO_ROOT = REPO_ROOT / "proto"
PROTO_FILES = ("shared/pb/canasta.proto",)
GENERATED = (
    "shared/pb/canasta_pb2.py",
    "shared/pb/canasta_pb2.pyi",
    "shared/pb/canasta_pb2_grpc.py",
    "shared/pb/canasta_pb2_grpc.pyi",
)
"""Every file the generator writes, relative to the output root."""


def _plugin(name: str) -> str:
    """The path of a protoc plugin installed beside this interpreter (or on PATH)."""
    here = Path(sys.executable).parent
    found = shutil.which(name, path=str(here)) or shutil.which(name)
    if found is None:
        raise SystemExit(f"{name} is not installed: pip install the project's dev extras")
    return found


def generate(out_dir: Path = REPO_ROOT) -> list[Path]:
    """Write the generated files under ``out_dir`` (the repository root by default)."""
    from grpc_tools import protoc  # dev dependency: imported only when generating

    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "shared" / "pb").mkdir(parents=True, exist_ok=True)
    include = Path(protoc.__file__).parent / "_proto"
    args = [
        "protoc",
        f"-I{PROTO_ROOT}",
        f"-I{include}",
        f"--plugin=protoc-gen-mypy={_plugin('protoc-gen-mypy')}",
        f"--plugin=protoc-gen-mypy_grpc={_plugin('protoc-gen-mypy_grpc')}",
        f"--python_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        f"--mypy_out={out_dir}",
        f"--mypy_grpc_out={out_dir}",
        *(str(PROTO_ROOT / name) for name in PROTO_FILES),
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed (see the messages above)")
    return [out_dir / name for name in GENERATED]


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else REPO_ROOT
    for path in generate(out):
        print(path)


if __name__ == "__main__":
    main()

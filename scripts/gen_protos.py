"""Generate the Python stubs of protos/ into the client package.

protoc emits ``from claw.sessiond.v1 import ...``; the stubs live in
``claw_sessiond_client.api.v1``, so that one import prefix is rewritten
(protobuf#1491 explains why protoc cannot do it itself).

Usage:
    python scripts/gen_protos.py           # write the stubs
    python scripts/gen_protos.py --check   # exit 1 if the committed stubs differ
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "protos"
PROTO = PROTO_ROOT / "claw" / "sessiond" / "v1" / "sessiond.proto"
OUT = ROOT / "clients" / "python" / "claw_sessiond_client" / "api" / "v1"
FILES = ("sessiond_pb2.py", "sessiond_pb2.pyi", "sessiond_pb2_grpc.py")


def generate(dest: Path) -> None:
    """Run protoc for sessiond.proto into ``dest`` and rewrite imports."""
    import grpc_tools
    from grpc_tools import protoc

    include = Path(grpc_tools.__file__).parent / "_proto"
    with tempfile.TemporaryDirectory() as tmp:
        rc = protoc.main(
            [
                "protoc",
                f"-I{PROTO_ROOT}",
                f"-I{include}",
                f"--python_out={tmp}",
                f"--pyi_out={tmp}",
                f"--grpc_python_out={tmp}",
                str(PROTO),
            ]
        )
        if rc != 0:
            raise SystemExit(f"protoc failed with exit code {rc}")
        dest.mkdir(parents=True, exist_ok=True)
        for name in FILES:
            text = (Path(tmp) / "claw" / "sessiond" / "v1" / name).read_text()
            text = text.replace("from claw.sessiond.v1 import", "from claw_sessiond_client.api.v1 import")
            (dest / name).write_text(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    if not args.check:
        generate(OUT)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        stale = [n for n in FILES if (Path(tmp) / n).read_text() != (OUT / n).read_text()]
    if stale:
        print(f"stale generated stubs: {', '.join(stale)}; run python scripts/gen_protos.py", file=sys.stderr)
        return 1
    print("generated stubs match protos/")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""Records torchao's cuBLAS block-scale layout (`torchao.prototype.mx_formats.utils.to_blocked`,
torchao 0.18.0, its torch path) for tests/scale_layout.rs: for each scale shape (rows, cols), the
uint8 scales i -> (7 * i + 3) % 256 row-major, swizzled and padded by to_blocked, as hex; and
from_blocked's inverse of those bytes, which must give the scales back.

    target/blocks-venv/bin/python scripts/gen_scale_layout_fixtures.py [--out FILE]

Needs torch and torchao 0.18.0 (scripts/torch-venv.sh makes such a venv)."""
import argparse
import json
import pathlib

import torch
import torchao
from torchao.prototype.mx_formats.utils import from_blocked, to_blocked

SHAPES = [(1, 1), (1, 4), (3, 5), (128, 4), (129, 4), (128, 5), (130, 9), (256, 8), (300, 17), (512, 1)]


def scales(rows, cols):
    return torch.tensor([(7 * i + 3) % 256 for i in range(rows * cols)], dtype=torch.uint8).reshape(rows, cols)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parent.parent
                                             / "tests/data/scale_layout/cublas128x4.json"))
    args = parser.parse_args()
    assert torchao.__version__.startswith("0.18.0"), torchao.__version__
    cases = []
    for rows, cols in SHAPES:
        s = scales(rows, cols)
        blocked = to_blocked(s)
        back = from_blocked(blocked, rows, cols)
        assert torch.equal(back, s), (rows, cols)
        cases.append({"rows": rows, "cols": cols, "swizzled": bytes(blocked.numpy().tobytes()).hex()})
    record = {
        "source": f"torchao {torchao.__version__} torchao.prototype.mx_formats.utils.to_blocked "
                  f"(torch {torch.__version__}); scripts/gen_scale_layout_fixtures.py",
        "scales": "uint8 (7 * i + 3) % 256, row-major",
        "cases": cases,
    }
    pathlib.Path(args.out).write_text(json.dumps(record, indent=1) + "\n")
    print(f"{len(cases)} shapes written to {args.out}")


if __name__ == "__main__":
    main()

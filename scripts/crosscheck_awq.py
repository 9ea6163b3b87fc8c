"""lowbit's `awq` row against AutoAWQ 0.2.9 run live: scripts/crosscheck_gptq.py --family awq (the
same cases, comparisons and tally; see there).

    python scripts/crosscheck_awq.py [--cases N] [--seed S] [--only SUBSTRING]
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.argv[1:1] = ["--family", "awq"]
import crosscheck_gptq  # noqa: E402

crosscheck_gptq.main()

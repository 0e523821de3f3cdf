"""Milliseconds of PRDC's exact nearest-neighbour search (``InstructionGroupedIndex.nearest``) per chunk size.

    .venv/bin/python benchmarks/prdc_search.py [--keys 100000] [--queries 256] [--chunks 65536 16384 4096 2048 1024]

Random keys with Meta-World's shapes (95 columns of ``(β·state, action)``, 120 distinct 384-d instructions, as
``algorithm_speed.py`` draws them); every chunk size searches the same queries, in alternation, one thread, and must
find the same neighbours. Prints the median of ``--repeats`` searches per chunk size.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from modules.prdc import InstructionGroupedIndex

POINT_COLUMNS, EMBEDDING_DIM, INSTRUCTIONS = 95, 384, 120


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=256)
    parser.add_argument("--chunks", type=int, nargs="+", default=[65536, 16384, 4096, 2048, 1024])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    generator = torch.Generator().manual_seed(0)
    table = torch.randn(INSTRUCTIONS, EMBEDDING_DIM, generator=generator)

    def draw(rows: int) -> tuple[torch.Tensor, torch.Tensor]:
        points = torch.randn(rows, POINT_COLUMNS, generator=generator)
        return points, table[torch.randint(INSTRUCTIONS, (rows,), generator=generator)]

    indexes = {chunk: InstructionGroupedIndex(chunk) for chunk in args.chunks}
    keys = draw(args.keys)
    for index in indexes.values():
        index.index(*keys)
    queries = draw(args.queries)
    expected = indexes[args.chunks[0]].nearest(*queries)
    seconds: dict[int, list[float]] = {chunk: [] for chunk in args.chunks}
    for _ in range(args.repeats):
        for chunk, index in indexes.items():
            start = time.perf_counter()
            found = index.nearest(*queries)
            seconds[chunk].append(time.perf_counter() - start)
            if not torch.equal(found, expected):
                raise SystemExit(f"chunk size {chunk} found other neighbours than {args.chunks[0]}")
    print(f"{args.queries} queries among {args.keys} keys, median ms per search:")
    for chunk, values in seconds.items():
        print(f"  chunk {chunk:>6}: {1000 * statistics.median(values):.1f}")


if __name__ == "__main__":
    main()

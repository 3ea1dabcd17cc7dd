# SPDX-License-Identifier: MIT
"""Word error counts for the scripts that score transcripts."""


def edit_distance(ref, hyp):
    """The fewest substitutions, insertions and deletions from the words
    `ref` to the words `hyp` (Levenshtein, one row at a time)."""
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[-1]

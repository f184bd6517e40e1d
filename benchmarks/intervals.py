"""Interval arithmetic on trace spans ([start, end) lists), for the overlap of
the comm stream with compute in runtime_step.py and gpu/analyze.py."""


def union(intervals):
    """Sorted, merged [start, end) intervals."""
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def total(intervals):
    """Summed length of merged intervals."""
    return sum(end - start for start, end in intervals)


def intersection(a, b):
    """Length of the intersection of two merged interval lists."""
    i = j = 0
    length = 0.0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            length += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return length

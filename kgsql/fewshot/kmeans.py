"""Deterministic k-means for picking diverse static examples (ACT-SQL's ``ns``).

Seeded k-means++ initialisation and Lloyd iterations on L2-normalised rows;
the same seed and data always give the same representatives, so the static
part of every prompt is fixed across runs.
"""
from __future__ import annotations

import numpy as np


def kmeans(x: np.ndarray, k: int, *, seed: int = 0, iterations: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """(centroids [k, d], labels [n]) of ``x`` [n, d]; ``k`` is capped at n."""
    n = len(x)
    k = min(k, n)
    if k <= 0:
        return np.zeros((0, x.shape[1] if x.ndim == 2 else 0), dtype=np.float32), np.zeros(n, dtype=int)
    rng = np.random.default_rng(seed)
    centroids = [x[int(rng.integers(n))]]
    d2 = ((x - centroids[0]) ** 2).sum(axis=1)
    for _ in range(1, k):
        total = float(d2.sum())
        idx = int(rng.choice(n, p=d2 / total)) if total > 0 else int(rng.integers(n))
        centroids.append(x[idx])
        d2 = np.minimum(d2, ((x - x[idx]) ** 2).sum(axis=1))
    c = np.stack(centroids).astype(np.float64)
    labels = np.zeros(n, dtype=int)
    for it in range(iterations):
        dist = _sq_distances(x, c)
        new = dist.argmin(axis=1)
        if it and np.array_equal(new, labels):
            break
        labels = new
        for j in range(k):
            members = x[labels == j]
            if len(members):
                c[j] = members.mean(axis=0)
    return c.astype(np.float32), labels


def _sq_distances(x: np.ndarray, c: np.ndarray, chunk: int = 4096) -> np.ndarray:
    """Squared distances of every row to every centroid, a chunk of rows at a time."""
    out = np.empty((len(x), len(c)))
    cc = (c ** 2).sum(axis=1)
    for i in range(0, len(x), chunk):
        part = x[i:i + chunk]
        out[i:i + chunk] = (part ** 2).sum(axis=1)[:, None] - 2 * part @ c.T + cc[None, :]
    return out


def representatives(x: np.ndarray, k: int, *, seed: int = 0) -> list[int]:
    """One row index per cluster (the member nearest its centroid), biggest cluster first."""
    centroids, labels = kmeans(x, k, seed=seed)
    picks = []
    for j in range(len(centroids)):
        members = np.flatnonzero(labels == j)
        if not len(members):
            continue
        dist = ((x[members] - centroids[j]) ** 2).sum(axis=1)
        picks.append((-len(members), int(members[int(dist.argmin())])))
    return [i for _, i in sorted(picks)]

"""Scorer ``image_pull`` (weight 1; advisory, never a filter): estimated image-pull time.

``est = image size * 8 / download bits per second``; 0 when the node already has the image; infinite
when its download throughput is 0 or unknown. ``score = 100 - est*100 // max_est`` over feasible nodes
with a finite estimate (infinite -> 0; 100 everywhere when max_est = 0). Since every node pulls the same
image, ``est_n / max_est = bps_min / bps_n``, so the score is computed exactly in integers as
``100 - (100 * bps_min) // bps_n``, where bps_min is the slowest feasible node that must pull.
"""

from __future__ import annotations

import numpy as np

from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray, Scorer


class ImagePull(Scorer):
    name, normalized = "image_pull", True

    def applies(self, ctx: TaskContext) -> bool:
        return ctx.task.image is not None

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        snapshot, image = ctx.snapshot, ctx.task.image
        assert image is not None
        bps = snapshot.memo.get(("download_bps",))
        if bps is None:
            bps = np.array([node.download_bps or 0 for node in snapshot.nodes], dtype=np.int64)
            snapshot.memo[("download_bps",)] = bps
        assert isinstance(bps, np.ndarray)
        present = snapshot.memo.get(("image_present", image.name))
        if present is None:  # static per image: one pass over the nodes per snapshot, not per placement
            present = np.array([image.name in node.images for node in snapshot.nodes], dtype=np.bool_)
            snapshot.memo[("image_present", image.name)] = present
        assert isinstance(present, np.ndarray)
        finite = present | (bps > 0)
        pulling = feasible & finite & ~present
        if image.size_bytes == 0 or not pulling.any():
            return np.where(finite, 100, 0).astype(np.int64)[cols]
        bps_min = int(bps[pulling].min())
        score = np.where(present, 100, np.where(bps > 0, 100 - (100 * bps_min) // np.maximum(bps, 1), 0))
        return score.astype(np.int64)[cols]

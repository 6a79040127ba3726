"""Thumbnails of the stages' pictures, for the Dagster UI: the plot cropped to what is drawn, then scaled down.

The UI shows a picture at its own size, so a 1000 × 4442 px rollout plot runs off the page and is mostly
margin; the thumbnail keeps the drawn part and fits a box a page holds. Deterministic: same picture, same bytes.
"""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image, ImageChops

from simready.common.atomic import write_bytes_atomic

#: The box a thumbnail fits in (px): about half an asset page's metadata column.
THUMBNAIL_BOX_PX = (480, 360)
#: Margin kept around the drawn part (px of the picture).
CROP_MARGIN_PX = 8


def write_thumbnail(picture: Path, out: Path, box_px: tuple[int, int] = THUMBNAIL_BOX_PX) -> Path:
    """Write the thumbnail of the PNG ``picture`` at ``out`` (atomically): cropped to where it differs from
    its corner colour (the background), scaled to fit ``box_px``; returns ``out``."""
    with Image.open(picture) as img:
        rgb = img.convert("RGB")
    background = Image.new("RGB", rgb.size, rgb.getpixel((0, 0)))
    drawn = ImageChops.difference(rgb, background).getbbox()
    if drawn is not None:
        x0, y0, x1, y1 = drawn
        rgb = rgb.crop((max(0, x0 - CROP_MARGIN_PX), max(0, y0 - CROP_MARGIN_PX),
                        min(rgb.width, x1 + CROP_MARGIN_PX), min(rgb.height, y1 + CROP_MARGIN_PX)))
    rgb.thumbnail(box_px, Image.Resampling.LANCZOS)
    data = io.BytesIO()
    rgb.save(data, format="PNG", optimize=True)
    return write_bytes_atomic(out, data.getvalue())

"""Run by the ``nuscenes-devkit`` venv (``make nuscenes-venv``; the devkit pins numpy < 2): load an export with the
official devkit, walk every sample and print, as JSON, each key camera frame's annotation boxes projected with the
devkit's own functions, every key LiDAR and radar cloud's point count, and the tables' sizes.

Usage: python tests/nuscenes_devkit_check.py DATAROOT VERSION
"""

import json
import sys

import numpy as np
from nuscenes.nuscenes import NuScenes
from nuscenes.utils.data_classes import LidarPointCloud, RadarPointCloud
from nuscenes.utils.geometry_utils import BoxVisibility, view_points


def main(dataroot: str, version: str) -> None:
    nusc = NuScenes(version=version, dataroot=dataroot, verbose=False)
    out = {"scenes": len(nusc.scene), "samples": [], "clouds": {}}
    for scene in nusc.scene:
        token = scene["first_sample_token"]
        while token:
            sample = nusc.get("sample", token)
            for channel, sd_token in sample["data"].items():
                sd = nusc.get("sample_data", sd_token)
                if sd["sensor_modality"] == "camera":
                    path, boxes, K = nusc.get_sample_data(sd_token, box_vis_level=BoxVisibility.NONE)
                    projected = []
                    for box in boxes:
                        corners = box.corners()
                        uv = view_points(corners, K, normalize=True)[:2]
                        projected.append({"instance": nusc.get("sample_annotation", box.token)["instance_token"],
                                          "in_front": bool(np.all(corners[2] > 0.1)),
                                          "u": [float(uv[0].min()), float(uv[0].max())],
                                          "v": [float(uv[1].min()), float(uv[1].max())]})
                    out["samples"].append({"scene": scene["name"], "sample": token, "channel": channel,
                                           "filename": sd["filename"], "width": sd["width"], "height": sd["height"],
                                           "boxes": projected})
                else:
                    cloud = (LidarPointCloud if sd["sensor_modality"] == "lidar" else RadarPointCloud).from_file(
                        nusc.get_sample_data_path(sd_token))
                    out["clouds"][sd["filename"]] = int(cloud.nbr_points())
            token = sample["next"]
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

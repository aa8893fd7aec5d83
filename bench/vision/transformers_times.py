"""Writes the bench images and times transformers' image processors on them.

usage: python transformers_times.py CONFIG_JSON OUT_DIR ROUNDS
Prints JSON: {"images": [{"file", "w", "h", "pil_us", "torchvision_us"}]} where each time is
the median over ROUNDS of the process CPU time (time.process_time: all threads) of load_image (decode + EXIF + RGB) plus the processor call, the same
work Portico's processor does per image.
"""

import json
import os
import sys
import time

import numpy as np
from PIL import Image
from transformers.image_utils import load_image

cfg_path, out, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(out, exist_ok=True)
cfg = json.load(open(cfg_path))
kw = {k: v for k, v in cfg.items() if k not in ("image_processor_type", "processor_class")}
if cfg["image_processor_type"].startswith("Qwen2VL"):
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil as Pil
    from transformers.models.qwen2_vl.image_processing_qwen2_vl import Qwen2VLImageProcessor as Tv
else:
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil as Pil
    from transformers.models.clip.image_processing_clip import CLIPImageProcessor as Tv
procs = {"pil_us": Pil(**kw), "torchvision_us": Tv(**kw)}

rng = np.random.default_rng(5)


def photo(w, h):
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.stack([x / w * 255, y / h * 255, 128 + 100 * np.sin(x / 9) * np.cos(y / 7)], -1)
    img += rng.normal(0, 10, img.shape)
    return Image.fromarray(np.clip(img, 0, 255).astype(np.uint8))


images = []
for w, h, fmt in [(640, 480, "JPEG"), (1280, 720, "JPEG"), (1920, 1080, "JPEG"), (1024, 768, "PNG"), (800, 600, "WEBP")]:
    name = f"{w}x{h}.{fmt.lower()}"
    photo(w, h).save(os.path.join(out, name), fmt, **({"quality": 90} if fmt != "PNG" else {}))
    row = {"file": name, "w": w, "h": h}
    for key, proc in procs.items():
        times = []
        for _ in range(rounds):
            t0 = time.process_time()
            proc(images=load_image(os.path.join(out, name)), return_tensors="np")
            times.append((time.process_time() - t0) * 1e6)
        row[key] = float(np.median(times))
    images.append(row)
print(json.dumps({"images": images}))

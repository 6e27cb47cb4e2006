#!/usr/bin/python3
"""Checks `evenfeed bench loader --dump-batch` output against an independent decode.

  /usr/bin/python3 bench/psnr_check.py SOURCE_FOLDER DUMP_DIR...

For each dumped image: PIL decodes the source file, crops the box batch.json reports,
resizes it to 224 with PIL bilinear (antialiased when shrinking) and flips it when
flagged; prints the worst and median PSNR of our output against that reference."""
import json, math, sys
from PIL import Image
import numpy as np
src_root = sys.argv[1]
for d in sys.argv[2:]:
    batch = json.load(open(d + '/batch.json'))
    ps = []
    for e in batch:
        src = Image.open(src_root + '/' + e['source']).convert('RGB')
        x, y, w, h = e['crop']
        ref = src.crop((x, y, x + w, y + h)).resize((224, 224), Image.BILINEAR)  # antialiased in PIL
        if e['flip']: ref = ref.transpose(Image.FLIP_LEFT_RIGHT)
        ours = np.asarray(Image.open(d + '/' + e['file']), dtype=np.float64)
        mse = ((ours - np.asarray(ref, dtype=np.float64)) ** 2).mean()
        ps.append((99 if mse == 0 else 10 * math.log10(255 ** 2 / mse), e['source']))
    ps.sort()
    print(d, len(ps), 'images: worst %.1f dB (%s), median %.1f dB' % (ps[0][0], ps[0][1], ps[len(ps) // 2][0]))

"""
OCR evaluation (ED / CER) for rectified documents, as in the DocUNet / DocTr /
DocGeoNet papers.  Uses Tesseract 4.x through pytesseract.

    python eval/eval_ocr.py --rec_path ./rec/ --gt_path ./scan/ --ocr_list ocr_img.txt

MS-SSIM and LD are computed with the MATLAB script (eval/evalUnwarp.m) because
the numbers in the papers come from that implementation.
"""
import os
import argparse
import json

import numpy as np
from PIL import Image
import pytesseract
import Levenshtein


def read_list(path):
    with open(path) as f:
        return [l.strip() for l in f if l.strip()]


def ocr(img_path, lang='eng'):
    img = Image.open(img_path).convert('RGB')
    return pytesseract.image_to_string(img, lang=lang, config='--psm 6')


def cer(pred, gt):
    if len(gt) == 0:
        return 0.0
    return Levenshtein.distance(pred, gt) / float(len(gt))


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--rec_path', default='./rec/')
    p.add_argument('--gt_path', default='./scan/')
    p.add_argument('--ocr_list', default='./eval/ocr_img.txt')
    p.add_argument('--suffix', default='_rec.png')
    p.add_argument('--lang', default='eng')
    p.add_argument('--out', default='ocr_result.json')
    args = p.parse_args()

    names = read_list(args.ocr_list)
    eds, cers = [], []
    per_img = {}
    for name in names:
        base = os.path.splitext(name)[0]
        rec_img = os.path.join(args.rec_path, base + args.suffix)
        # every crop of a page (e.g. 12_1, 12_2) is compared with the same scan
        gt_img = os.path.join(args.gt_path, base.split('_')[0] + '.png')
        if not os.path.isfile(rec_img):
            print('missing {}'.format(rec_img))
            continue
        gt_txt = ocr(gt_img, args.lang)
        pred_txt = ocr(rec_img, args.lang)
        ed = Levenshtein.distance(pred_txt, gt_txt)
        c = cer(pred_txt, gt_txt)
        eds.append(ed)
        cers.append(c)
        per_img[base] = {'ed': ed, 'cer': c}
        print('{:<12s} ED {:5d}  CER {:.4f}'.format(base, ed, c))

    print('-' * 40)
    print('images: {}'.format(len(eds)))
    print('ED : {:.2f}'.format(float(np.mean(eds)) if eds else float('nan')))
    print('CER: {:.4f}'.format(float(np.mean(cers)) if cers else float('nan')))
    with open(args.out, 'w') as f:
        json.dump({'ED': float(np.mean(eds)) if eds else None,
                   'CER': float(np.mean(cers)) if cers else None,
                   'per_image': per_img}, f, indent=2)


if __name__ == '__main__':
    main()

"""
Copyright (c) Meta Platforms, Inc. and affiliates.

This source code is licensed under the MIT license found in the
LICENSE file in the root directory of this source tree.
"""
import argparse
import logging
import pypdfium2
from pathlib import Path
from tqdm import tqdm
import io
from typing import Optional, List, Union

logging.getLogger("pypdfium2").setLevel(logging.WARNING)


def rasterize_paper(
    pdf: Union[Path, bytes],
    outpath: Optional[Path] = None,
    dpi: int = 96,
    return_pil=False,
    pages=None,
) -> Optional[List[io.BytesIO]]:
    """
    Rasterize a PDF file to PNG images.

    Rendering happens on the CPU (pdfium); only the resulting page tensors are later
    moved to the GPU by the caller, so this can safely run inside DataLoader workers.

    Args:
        pdf (Path): The path to the PDF file.
        outpath (Optional[Path], optional): The output directory. If None, the PIL images will be returned instead. Defaults to None.
        dpi (int, optional): The output DPI. Defaults to 96.
        return_pil (bool, optional): Whether to return the PIL images instead of writing them to disk. Defaults to False.
        pages (Optional[List[int]], optional): The pages to rasterize. If None, all pages will be rasterized. Defaults to None.

    Returns:
        Optional[List[io.BytesIO]]: The PIL images if `return_pil` is True, otherwise None.
    """
    pils = []
    if outpath is None:
        return_pil = True
    try:
        if isinstance(pdf, (str, Path)):
            pdf = pypdfium2.PdfDocument(pdf)
        if pages is None:
            pages = range(len(pdf))
        renderer = pdf.render(
            pypdfium2.PdfBitmap.to_pil,
            page_indices=pages,
            scale=dpi / 72,
        )
        for i, image in zip(pages, renderer):
            if return_pil:
                page_bytes = io.BytesIO()
                image.save(page_bytes, "bmp")
                pils.append(page_bytes)
            else:
                image.save((outpath / ("%02d.png" % (i + 1))), "png")
    except Exception as e:
        logging.error(e)
    if return_pil:
        return pils


def rasterize_pages(pdf_path: Path, out_dir: Path, dpi: int = 96, skip_existing: bool = True) -> int:
    """
    Render every page of `pdf_path` into `out_dir/<stem>/NN.png`. Returns the number of pages written.
    """
    target = out_dir / pdf_path.stem
    if skip_existing and target.exists() and any(target.glob("*.png")):
        return 0
    target.mkdir(parents=True, exist_ok=True)
    try:
        doc = pypdfium2.PdfDocument(pdf_path)
    except pypdfium2.PdfiumError as e:
        logging.warning("could not open %s: %s", pdf_path, e)
        return 0
    n = len(doc)
    rasterize_paper(doc, outpath=target, dpi=dpi)
    return n


def main():
    parser = argparse.ArgumentParser(description="Rasterize PDFs for the Nougat dataset (CPU only, no GPU needed).")
    parser.add_argument("--pdfs", nargs="+", type=Path, help="PDF files", required=True)
    parser.add_argument("--out", type=Path, help="Output dir", default=None)
    parser.add_argument("--dpi", type=int, default=96, help="What resolution the pages will be saved at")
    parser.add_argument("--pages", type=int, nargs="+", default=None, help="list of page numbers to rasterize")
    parser.add_argument("--no-skip", dest="skip_existing", action="store_false")
    args = parser.parse_args()
    total = 0
    for pdf_file in tqdm(args.pdfs):
        assert pdf_file.exists() and pdf_file.is_file()
        if args.out is None:
            outpath: Path = pdf_file.parent / pdf_file.stem
        else:
            outpath = args.out
        if args.pages is not None:
            outpath.mkdir(exist_ok=True, parents=True)
            rasterize_paper(pdf_file, outpath, dpi=args.dpi, pages=[p - 1 for p in args.pages])
        else:
            total += rasterize_pages(pdf_file, outpath.parent if args.out is None else outpath, dpi=args.dpi,
                                     skip_existing=args.skip_existing)
    logging.info("rendered %d pages", total)


if __name__ == "__main__":
    main()

"""Convert a folder of PDFs to markdown with several worker processes per GPU."""
import atexit
import math
import os
import time
import traceback

import click
import torch
import torch.multiprocessing as mp
from tqdm import tqdm

from marker.config.parser import ConfigParser
from marker.config.printer import CustomClickPrinter
from marker.logger import configure_logging, get_logger
from marker.models import create_model_dict
from marker.output import output_exists, save_output
from marker.settings import settings

configure_logging()
logger = get_logger()

# GB of VRAM one worker needs for layout + OCR + table models at default batch sizes
VRAM_PER_TASK = 5


def worker_init(model_dict=None):
    if model_dict is None:
        model_dict = create_model_dict()

    global model_refs
    model_refs = model_dict

    # Ensure we clean up the model references on exit
    atexit.register(worker_exit)


def worker_exit():
    global model_refs
    try:
        del model_refs
    except Exception:
        pass


def process_single_pdf(args):
    page_count = 0
    fpath, cli_options = args
    torch.set_num_threads(cli_options["total_torch_threads"])
    del cli_options["total_torch_threads"]

    config_parser = ConfigParser(cli_options)
    out_folder = config_parser.get_output_folder(fpath)
    base_name = config_parser.get_base_filename(fpath)
    if cli_options.get("skip_existing") and output_exists(out_folder, base_name):
        return page_count

    converter_cls = config_parser.get_converter_cls()
    config_dict = config_parser.generate_config_dict()
    config_dict["disable_tqdm"] = True

    try:
        converter = converter_cls(
            config=config_dict,
            artifact_dict=model_refs,
            processor_list=config_parser.get_processors(),
            renderer=config_parser.get_renderer(),
            llm_service=config_parser.get_llm_service(),
        )
        rendered = converter(fpath)
        out_folder = config_parser.get_output_folder(fpath)
        save_output(rendered, out_folder, base_name)
        page_count = converter.page_count
    except Exception as e:
        logger.error(f"Error converting {fpath}: {e}")
        traceback.print_exc()
    finally:
        if settings.TORCH_DEVICE_MODEL == "cuda":
            torch.cuda.empty_cache()
    return page_count


def get_default_workers():
    if settings.TORCH_DEVICE_MODEL != "cuda":
        return 1
    # Estimate from the memory of the first visible card
    total_gb = torch.cuda.get_device_properties(0).total_memory / 1024**3
    return max(1, math.floor(total_gb / VRAM_PER_TASK))


@click.command(cls=CustomClickPrinter)
@click.argument("in_folder", type=str)
@click.option("--chunk_idx", type=int, default=0, help="Chunk index to convert")
@click.option("--num_chunks", type=int, default=1, help="Number of chunks being processed in parallel")
@click.option("--max_files", type=int, default=None, help="Maximum number of pdfs to convert")
@click.option("--workers", type=int, default=None, help="Number of worker processes to use (default: VRAM / 5GB per GPU).")
@click.option("--skip_existing", is_flag=True, default=False, help="Skip existing converted files.")
@click.option("--debug_print", is_flag=True, default=False, help="Print debug information.")
@click.option("--max_tasks_per_worker", type=int, default=10, help="Maximum number of tasks per worker process before recycling.")
@ConfigParser.common_options
def convert_cli(in_folder: str, **kwargs):
    total_pages = 0
    in_folder = os.path.abspath(in_folder)
    files = [os.path.join(in_folder, f) for f in os.listdir(in_folder)]
    files = [f for f in files if os.path.isfile(f)]

    # Handle chunks if we're processing in parallel
    # Ensure we get all files into a chunk
    chunk_size = math.ceil(len(files) / kwargs["num_chunks"])
    start_idx = kwargs["chunk_idx"] * chunk_size
    end_idx = start_idx + chunk_size
    files_to_convert = files[start_idx:end_idx]

    # Limit files converted if needed
    if kwargs["max_files"]:
        files_to_convert = files_to_convert[: kwargs["max_files"]]

    workers = kwargs["workers"] or get_default_workers()
    total_processes = min(len(files_to_convert), workers)

    try:
        mp.set_start_method("spawn")  # Required for CUDA, forkserver doesn't work
    except RuntimeError:
        raise RuntimeError("Set start method to spawn twice. This may be a temporary issue with the script. Please try running it again.")

    if settings.TORCH_DEVICE_MODEL == "mps":
        logger.warning("Cannot use MPS with torch multiprocessing share_memory. This will make things less memory efficient. "
                       "If you want to share memory, you have to use CUDA or CPU. Set the TORCH_DEVICE environment variable to change the device.")
        model_dict = None
    else:
        model_dict = create_model_dict()
        for k, v in model_dict.items():
            v.model.share_memory()

    logger.info(f"Converting {len(files_to_convert)} pdfs in chunk {kwargs['chunk_idx'] + 1}/{kwargs['num_chunks']} "
                f"with {total_processes} processes and saving to {kwargs['output_dir']}")
    task_args = [(f, kwargs) for f in files_to_convert]

    start_time = time.time()
    with mp.Pool(processes=total_processes, initializer=worker_init, initargs=(model_dict,),
                 maxtasksperchild=kwargs["max_tasks_per_worker"]) as pool:
        pbar = tqdm(total=len(task_args), desc="Processing PDFs", unit="pdf")
        for page_count in pool.imap_unordered(process_single_pdf, task_args):
            pbar.update(1)
            total_pages += page_count
        pbar.close()

    total_time = time.time() - start_time
    print(f"Inferenced {total_pages} pages in {total_time:.2f} seconds, for a throughput of {total_pages / total_time:.2f} pages/sec for chunk {kwargs['chunk_idx'] + 1}/{kwargs['num_chunks']}")

    # Delete all CUDA tensors
    del model_dict

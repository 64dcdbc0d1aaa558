import gc
import time
from pathlib import Path
import pprint
import logging
import warnings
logger = logging.getLogger(__name__)

import numpy as np
import torch
import psutil

import kilosort
from kilosort import (
    preprocessing,
    datashift,
    template_matching,
    clustering_qr,
    clustering_qr as cluster_qr,
    io,
    spikedetect,
    CCG,
    PROBE_DIR
)
from kilosort.parameters import DEFAULT_SETTINGS


RECOMMENDED_VRAM = 8  # GiB


def run_kilosort(settings, probe=None, probe_name=None, filename=None,
                 data_dir=None, file_object=None, results_dir=None,
                 data_dtype=None, do_CAR=True, invert_sign=False, device=None,
                 progress_bar=None, save_extra_vars=False, clear_cache=False,
                 save_preprocessed_copy=False, bad_channels=None,
                 verbose_console=False, verbose_log=False):
    """Run full spike sorting pipeline on specified data.

    Parameters
    ----------
    settings : dict
        Specifies a number of configurable parameters used throughout the
        spike sorting pipeline. See `kilosort/parameters.py` for a full list of
        available parameters.
        NOTE: `n_chan_bin` must be specified here, but all other settings are
              optional.
    probe : dict; optional.
        A Kilosort4 probe dictionary, as returned by `kilosort.io.load_probe`.
    probe_name : str; optional.
        Filename of probe to use, within the default `PROBE_DIR`. Only include
        the filename without any preceeding directories. Will ony be used if
        `probe is None`. Alternatively, the full filepath to a probe stored in
        any directory can be specified with `settings = {'probe_path': ...}`.
    filename: str or Path; optional.
        Full path to binary data file. If specified, will also set
        `data_dir = filename.parent`.
    data_dir : str or Path; optional.
        Specifies directory where binary data file is stored. Kilosort will
        attempt to find the binary file. This works best if there is exactly one
        file in the directory with a .bin, .bat, .dat, or .raw extension.
        Only used if `filename is None`.
    results_dir : str or Path; optional.
        Directory where results will be stored. By default, will be set to
        `data_dir / 'kilosort4'`.
    data_dtype : str or type; optional.
        dtype of data in binary file, like `'int32'` or `np.uint16`. By default,
        dtype is assumed to be `'int16'`.
    do_CAR : bool; default=True.
        If True, apply common average reference during preprocessing
        (recommended).
    invert_sign : bool; default=False.
        If True, flip positive/negative values in data to conform to standard
        expected by Kilosort4.
    device : torch.device; optional.
        CPU or GPU device to use for PyTorch calculations. By default, PyTorch
        will use the first detected GPU. If no GPUs are detected, CPU will be
        used. To specify a GPU, use `torch.device('cuda:n')` where n is the
        GPU number.
    progress_bar : TODO; optional.
        Informs `tqdm` package how to report progress, type unclear.
    save_extra_vars : bool; default=False.
        If True, save tF and Wall to disk after sorting.
    clear_cache : bool; default=False.
        If True, force pytorch to free up memory reserved for its cache in
        between memory-intensive operations.
        Note that setting `clear_cache=True` is NOT recommended unless you
        encounter GPU out-of-memory errors, since this can result in slower
        sorting.
    save_preprocessed_copy : bool; default=False.
        If True, save a pre-processed copy of the data (including drift
        correction) to `temp_wh.dat` in the results directory and format Phy
        output to use that copy of the data.
    bad_channels : list; optional.
        A list of channel indices (rows in the binary file) that should not be
        included in sorting.

    Raises
    ------
    ValueError
        If settings[`n_chan_bin`] is None (default). User must specify, for
        example:  `run_kilosort(settings={'n_chan_bin': 385})`.

    Returns
    -------
    ops : dict
        Dictionary storing settings and results for all algorithmic steps.
    st : np.ndarray
        3-column array of peak time (in samples), template, and amplitude for
        each spike.
    clu : np.ndarray
        1D vector of cluster ids indicating which spike came from which cluster,
        same shape as `st[:,0]`.
    tF : torch.Tensor
        PC features for each spike, with shape
        (n_spikes, nearest_chans, n_pcs)
    Wall : torch.Tensor
        PC feature representation of spike waveforms for each cluster, with shape
        (n_clusters, n_channels, n_pcs).
    similar_templates : np.ndarray.
        Similarity score between each pair of clusters, computed as correlation
        between clusters. Shape (n_clusters, n_clusters).
    is_ref : np.ndarray.
        1D boolean array with shape (n_clusters,) indicating whether each
        cluster is refractory.
    est_contam_rate : np.ndarray.
        Contamination rate for each cluster, computed as fraction of refractory
        period violations relative to expectation based on a Poisson process.
        Shape (n_clusters,).
    kept_spikes : np.ndarray.
        Boolean mask with shape (n_spikes,) that is False for spikes that were
        removed by `kilosort.postprocessing.remove_duplicate_spikes`
        and True otherwise.

    """
    # Configure settings, ops, and file paths
    if settings is None or settings.get('n_chan_bin', None) is None:
        raise ValueError(
            '`n_chan_bin` is a required setting. This is the total number of '
            'channels in the binary file, which may or may not be equal to the '
            'number of channels specified by the probe.'
            )
    settings = {**DEFAULT_SETTINGS, **settings}
    filename, data_dir, results_dir, probe = \
        set_files(settings, filename, probe, probe_name, data_dir, results_dir, bad_channels)
    setup_logger(results_dir, verbose_console=verbose_console)

    try:
        logger.info(f"Kilosort version {kilosort.__version__}")
        logger.info(f"Python version {'.'.join(map(str, __import__('sys').version_info[:3]))}")
        logger.info('-' * 40)
        logger.info('System information:')
        logger.info(get_system_info())
        logger.info('-' * 40)

        # Set device, if not specified
        if device is None:
            if torch.cuda.is_available():
                logger.info('Using GPU for PyTorch computations. '
                            'Specify `device` to change this.')
                device = torch.device('cuda')
            else:
                logger.info('Using CPU for PyTorch computations. '
                            'Specify `device` to change this.')
                device = torch.device('cpu')

        if device != torch.device('cpu'):
            memory = torch.cuda.get_device_properties(device).total_memory/1024**3
            if memory < RECOMMENDED_VRAM:
                logger.info(
                    f'A GPU with at least {RECOMMENDED_VRAM}GB of VRAM is '
                    'recommended. You are using a GPU with '
                    f'{memory:.2f}GB of VRAM. You may encounter out-of-memory '
                    'errors if you continue.'
                )

        logger.info(f"Sorting {filename}")
        logger.info('-' * 40)

        if data_dtype is None:
            logger.info(
                "Interpreting binary file as default dtype='int16'. If data was "
                "saved in a different format, specify `data_dtype`."
                )
            data_dtype = 'int16'

        if not do_CAR:
            logger.info("Skipping common average reference.")

        tic0 = time.time()
        ops = initialize_ops(settings, probe, data_dtype, do_CAR, invert_sign,
                             device, save_preprocessed_copy)
        # Remove some stuff that doesn't need to be printed twice, then pretty-print
        # format for log file.
        ops_copy = ops.copy()
        _ = ops_copy.pop('settings')
        _ = ops_copy.pop('probe')
        print_ops = pprint.pformat(ops_copy, indent=4, sort_dicts=False)
        logger.debug(f"Initial ops:\n{print_ops}\n")

        # Set preprocessing and drift correction parameters
        ops = compute_preprocessing(ops, device, tic0=tic0, file_object=file_object)
        np.random.seed(1)
        torch.cuda.manual_seed_all(1)
        torch.random.manual_seed(1)
        ops, bfile, st0 = compute_drift_correction(
            ops, device, tic0=tic0, progress_bar=progress_bar,
            file_object=file_object, clear_cache=clear_cache,
            )

        # Sort spikes and save results
        st, tF, _, _ = detect_spikes(
            ops, device, bfile, tic0=tic0, progress_bar=progress_bar,
            clear_cache=clear_cache
            )
        clu, Wall = cluster_spikes(
            st, tF, ops, device, bfile, tic0=tic0, progress_bar=progress_bar,
            clear_cache=clear_cache,
            )
        ops, similar_templates, is_ref, est_contam_rate, kept_spikes = \
            save_sorting(ops, results_dir, st, clu, tF, Wall, bfile.imin, tic0,
                         save_extra_vars=save_extra_vars,
                         save_preprocessed_copy=save_preprocessed_copy)
    except Exception as e:
        if isinstance(e, torch.cuda.OutOfMemoryError):
            logger.exception('Out of memory error, printing performance...')
            log_performance(logger, level='info')
            log_cuda_details(logger)
        # This makes sure the full traceback is written to log file.
        logger.exception('Encountered error in `run_kilosort`:')
        # Annoyingly, this will print the error message twice for console, but
        # I haven't found a good way around that.
        raise

    finally:
        close_logger()

    return ops, st, clu, tF, Wall, similar_templates, \
           is_ref, est_contam_rate, kept_spikes


def set_files(settings, filename, probe, probe_name,
              data_dir, results_dir, bad_channels):
    """Parse file and directory information for data, probe and results."""
    # Check for filename
    filename = settings.get('filename', None) if filename is None else filename
    # Use data_dir if filename not available
    if filename is None:
        data_dir = settings.get('data_dir', None) if data_dir is None else data_dir
        if data_dir is None:
            raise ValueError('no path to data provided, set "data_dir=" or "filename="')
        data_dir = Path(data_dir).resolve()
        if not data_dir.exists():
            raise FileExistsError(f"data_dir '{data_dir}' does not exist")
        filename = io.find_binary(data_dir=data_dir)
    else:
        filename = Path(filename)
        data_dir = filename.parent

    # Convert paths to strings when saving to ops, otherwise ops can only
    # be loaded on the operating system that originally ran the code.
    settings['filename'] = filename
    settings['data_dir'] = data_dir

    results_dir = settings.get('results_dir', None) if results_dir is None else results_dir
    results_dir = Path(results_dir).resolve() if results_dir is not None else None
    if results_dir is None:
        results_dir = data_dir / 'kilosort4'
    results_dir.mkdir(exist_ok=True)
    settings['results_dir'] = results_dir

    if probe is None:
        if probe_name is not None:
            probe_path = PROBE_DIR / probe_name
        elif settings.get('probe_path', None) is not None:
            probe_path = Path(settings['probe_path']).resolve()
        else:
            raise ValueError('no probe_name or probe_path provided, set probe_name=')
        probe = io.load_probe(probe_path)

    if bad_channels is not None:
        probe = io.remove_bad_channels(probe, bad_channels)

    return filename, data_dir, results_dir, probe


def initialize_ops(settings, probe, data_dtype, do_CAR, invert_sign,
                   device, save_preprocessed_copy) -> dict:
    """Package settings and probe information into a single `ops` dictionary."""
    ops = settings.copy()
    ops['settings'] = settings
    ops['probe'] = probe
    ops['data_dtype'] = data_dtype
    ops['do_CAR'] = do_CAR
    ops['invert_sign'] = invert_sign
    ops['NTbuff'] = ops['batch_size'] + 2 * ops['nt']
    ops['Nchan'] = len(probe['chanMap'])
    ops['torch_device'] = str(device)
    ops['save_preprocessed_copy'] = save_preprocessed_copy

    if not settings['templates_from_data'] and settings['nt'] != 61:
        raise ValueError('If using pre-computed universal templates '
                         '(templates_from_data=False), nt must be 61')

    ops = {**ops, **probe}

    return ops


def get_system_info():
    """Return a short, human readable description of CPU / RAM / GPU."""
    lines = [f"CPU: {psutil.cpu_count(logical=False)} cores, "
             f"{psutil.virtual_memory().total / 2**30:.1f} GiB RAM"]
    if torch.cuda.is_available() and torch.cuda.device_count() > 0:
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            lines.append(f"GPU {i}: {p.name}, {p.total_memory / 2**30:.1f} GiB, "
                         f"compute capability {p.major}.{p.minor}")
    else:
        lines.append("GPU: none detected")
    return "\n".join(lines)


def log_performance(log=None, level=None, header=None, reset=False):
    """Log timing, CPU / RAM usage and GPU memory usage."""
    if log is None:
        log = logger
    level = 'debug' if level is None else level
    logf = getattr(log, level)
    if header is not None:
        logf(header)

    mem = psutil.virtual_memory()
    logf(f"CPU usage:    {psutil.cpu_percent():5.2f} %")
    logf(f"Memory:       {mem.percent:5.2f} %     |  {mem.used / 2**30:8.2f}   /  {mem.total / 2**30:8.2f} GB")

    if torch.cuda.is_initialized():
        gpu_used = torch.cuda.memory_allocated() / 2**30
        gpu_peak = torch.cuda.max_memory_allocated() / 2**30
        gpu_reserved = torch.cuda.memory_reserved() / 2**30
        gpu_total = torch.cuda.get_device_properties(0).total_memory / 2**30
        logf(f"GPU memory:   {100 * gpu_used / gpu_total:5.2f} %     |  {gpu_used:8.2f}   /  {gpu_total:8.2f} GB")
        logf(f"GPU memory:   {100 * gpu_reserved / gpu_total:5.2f} %     |  {gpu_reserved:8.2f}   /  {gpu_total:8.2f} GB (reserved)")
        logf(f"Max alloc:    {100 * gpu_peak / gpu_total:5.2f} %     |  {gpu_peak:8.2f}   /  {gpu_total:8.2f} GB")
        if reset:
            torch.cuda.reset_peak_memory_stats()


def log_cuda_details(log):
    """Dump the CUDA caching allocator summary (used when debugging OOM errors)."""
    if not torch.cuda.is_available():
        return
    log.info(torch.cuda.memory_summary(abbreviated=True))


def compute_preprocessing(ops, device, tic0=np.nan, file_object=None):
    """Compute preprocessing parameters and save them to `ops`."""
    tic = time.time()
    logger.info(' ')
    logger.info('Computing preprocessing variables.')
    logger.info('-' * 40)

    n_chan_bin = ops['n_chan_bin']
    fs = ops['fs']
    NT = ops['batch_size']
    nt = ops['nt']
    twav_min = ops['twav_min']
    chan_map = ops['chanMap']
    dtype = ops['data_dtype']
    do_CAR = ops['do_CAR']
    invert = ops['invert_sign']
    xc = ops['xc']
    yc = ops['yc']
    whitening_range = ops['whitening_range']
    highpass_cutoff = ops['highpass_cutoff']

    # Compute high pass filter
    cutoff = 300 if highpass_cutoff is None else highpass_cutoff
    hp_filter = preprocessing.get_highpass_filter(fs, cutoff, device=device)
    # Compute whitening matrix
    bfile = io.BinaryFiltered(ops['filename'], n_chan_bin, fs, NT, nt, twav_min,
                              chan_map, hp_filter, device=device, do_CAR=do_CAR,
                              invert_sign=invert, dtype=dtype, file_object=file_object)
    whiten_mat = preprocessing.get_whitening_matrix(bfile, xc, yc, nskip=ops['nskip'],
                                                    nrange=whitening_range, device=device)

    bfile.close()

    # Save results
    ops['Nbatches'] = bfile.n_batches
    ops['preprocessing'] = {}
    ops['preprocessing']['whiten_mat'] = whiten_mat
    ops['preprocessing']['hp_filter'] = hp_filter
    ops['Wrot'] = whiten_mat
    ops['fwav'] = hp_filter

    logger.info(f'Preprocessing filters computed in {time.time()-tic : .2f}s; ' +
                f'total {time.time()-tic0 : .2f}s')
    log_performance(logger, header='Preprocessing')

    return ops


def compute_drift_correction(ops, device, tic0=np.nan, progress_bar=None,
                             file_object=None, clear_cache=False):
    """Compute drift correction parameters and save them to `ops`."""
    tic = time.time()
    logger.info(' ')
    logger.info('Computing drift correction.')
    logger.info('-' * 40)

    bfile = io.BinaryFiltered(
        ops['filename'], ops['n_chan_bin'], ops['fs'], ops['batch_size'],
        ops['nt'], ops['twav_min'], ops['chanMap'],
        hp_filter=ops['preprocessing']['hp_filter'],
        whiten_mat=ops['preprocessing']['whiten_mat'], device=device,
        do_CAR=ops['do_CAR'], invert_sign=ops['invert_sign'],
        dtype=ops['data_dtype'], file_object=file_object
        )

    ops, st = datashift.run(ops, bfile, device=device, progress_bar=progress_bar,
                            clear_cache=clear_cache)
    bfile.close()
    logger.info(f'drift computed in {time.time()-tic : .2f}s; ' +
                f'total {time.time()-tic0 : .2f}s')
    if clear_cache:
        torch.cuda.empty_cache()
    log_performance(logger, header='Drift correction', reset=True)

    # binary file with drift correction
    bfile = io.BinaryFiltered(
        ops['filename'], ops['n_chan_bin'], ops['fs'], ops['batch_size'],
        ops['nt'], ops['twav_min'], ops['chanMap'],
        hp_filter=ops['preprocessing']['hp_filter'],
        whiten_mat=ops['preprocessing']['whiten_mat'], device=device,
        dshift=ops['dshift'], do_CAR=ops['do_CAR'], dtype=ops['data_dtype'],
        invert_sign=ops['invert_sign'], file_object=file_object
        )

    return ops, bfile, st


def detect_spikes(ops, device, bfile, tic0=np.nan, progress_bar=None,
                  clear_cache=False):
    """Detect spikes via template deconvolution."""
    tic = time.time()
    logger.info(' ')
    logger.info('Extracting spikes using templates')
    logger.info('-' * 40)
    st0, tF, ops = spikedetect.run(ops, bfile, device=device, progress_bar=progress_bar,
                                   clear_cache=clear_cache)
    tF = torch.from_numpy(tF)
    if clear_cache:
        gc.collect()
        torch.cuda.empty_cache()  # release cached blocks before clustering
    logger.info(f'{len(st0)} spikes extracted in {time.time()-tic : .2f}s; ' +
                f'total {time.time()-tic0 : .2f}s')
    log_performance(logger, header='Spike detection', reset=True)

    tic = time.time()
    logger.info(' ')
    logger.info('First clustering')
    logger.info('-' * 40)
    clu, Wall = clustering_qr.run(ops, st0, tF, mode='spikes', device=device,
                                  progress_bar=progress_bar, clear_cache=clear_cache)
    Wall3 = template_matching.postprocess_templates(Wall, ops, clu, st0, device=device)
    logger.info(f'{clu.max()+1} clusters found, in {time.time()-tic : .2f}s; ' +
                f'total {time.time()-tic0 : .2f}s')

    tic = time.time()
    logger.info(' ')
    logger.info('Extracting spikes using cluster waveforms')
    logger.info('-' * 40)
    st, tF, ops = template_matching.extract(ops, bfile, Wall3, device=device,
                                            progress_bar=progress_bar)
    logger.info(f'{len(st)} spikes extracted in {time.time()-tic : .2f}s; ' +
                f'total {time.time()-tic0 : .2f}s')
    log_performance(logger, header='Template matching', reset=True)

    return st, tF, Wall, clu


def cluster_spikes(st, tF, ops, device, bfile, tic0=np.nan, progress_bar=None,
                   clear_cache=False):
    """Cluster spikes using graph-based methods."""
    tic = time.time()
    logger.info(' ')
    logger.info('Final clustering')
    logger.info('-' * 40)
    clu, Wall = clustering_qr.run(ops, st, tF, mode='template', device=device,
                                  progress_bar=progress_bar, clear_cache=clear_cache)
    logger.info(f'{clu.max()+1} clusters found, in {time.time()-tic : .2f}s; ' +
                f'total {time.time()-tic0 : .2f}s')
    log_performance(logger, header='Final clustering', reset=True)
    return clu, Wall


def save_sorting(ops, results_dir, st, clu, tF, Wall, imin, tic0=np.nan,
                 save_extra_vars=False, save_preprocessed_copy=False):
    """Save sorting results, and format them for use with Phy."""
    logger.info(' ')
    logger.info('Saving to phy and computing refractory periods')
    logger.info('-' * 40)
    results_dir, similar_templates, is_ref, est_contam_rate, kept_spikes = io.save_to_phy(
        st, clu, tF, Wall, ops['probe'], ops, imin, results_dir=results_dir,
        data_dtype=ops['data_dtype'], save_extra_vars=save_extra_vars,
        save_preprocessed_copy=save_preprocessed_copy
        )
    logger.info(f'{int(is_ref.sum())} units found with good refractory periods')

    runtime = time.time()-tic0
    logger.info(' ')
    logger.info(f'Total runtime: {runtime:.2f}s = {int(runtime//3600):02d}:' +
                f'{int(runtime//60):02d}:{int(runtime%60)} h:m:s')
    ops['runtime'] = runtime
    io.save_ops(ops, results_dir)
    logger.info(f'Sorting output saved in: {results_dir}.')

    return ops, similar_templates, is_ref, est_contam_rate, kept_spikes


def setup_logger(results_dir, verbose_console=False):
    # Adapted from
    # https://docs.python.org/2/howto/logging-cookbook.html#logging-to-multiple-destinations
    # In summary: only send logging.debug statements to log file, not console.

    # set up logging to file for root logger
    logging.basicConfig(level=logging.DEBUG,
                        format='%(asctime)s %(name)-12s %(levelname)-8s %(message)s',
                        datefmt='%m-%d %H:%M',
                        filename=results_dir/'kilosort4.log',
                        filemode='w')

    # define a Handler which writes INFO messages or higher to the sys.stderr
    console = logging.StreamHandler()
    console_level = logging.DEBUG if verbose_console else logging.INFO
    console.setLevel(console_level)
    # format console output
    console_formatter = logging.Formatter('%(name)-12s: %(message)s')
    console.setFormatter(console_formatter)
    # add the console handler to the root logger
    logging.getLogger('').addHandler(console)

    # Set 3rd party loggers to INFO or above only,
    # so that it doesn't spam the log file
    numba_log = logging.getLogger('numba')
    numba_log.setLevel(logging.INFO)

    mpl_log = logging.getLogger('matplotlib')
    mpl_log.setLevel(logging.INFO)


def close_logger():
    logger = logging.getLogger('')
    for handler in logger.handlers:
        handler.close()
        logger.removeHandler(handler)

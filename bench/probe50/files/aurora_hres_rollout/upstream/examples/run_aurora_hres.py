"""Ten-day forecast with the 0.1-degree Aurora model from an IFS HRES T0 analysis.

    python examples/run_aurora_hres.py --date 2022-05-11 --steps 40 --out preds.nc

Downloads the static variables and the two initial states (t-6h, t) from the WeatherBench2
HRES T0 zarr, runs an autoregressive rollout in bf16 and writes the predictions as netCDF.
"""
import argparse
import gc
import pickle
from datetime import datetime, timedelta
from pathlib import Path

import fsspec
import numpy as np
import torch
import xarray as xr

from aurora import Aurora, Batch, Metadata, rollout

WB2_HRES = "gs://weatherbench2/datasets/hres_t0/2016-2022-6h-1440x721.zarr"
STATIC = "https://huggingface.co/microsoft/aurora/resolve/main/aurora-0.1-static.pickle"


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--date", default="2022-05-11")
    p.add_argument("--steps", type=int, default=40, help="6-hour steps")
    p.add_argument("--out", default="aurora_hres_preds.nc")
    p.add_argument("--cache", default="~/.cache/aurora")
    p.add_argument("--checkpoint", default="aurora-0.1-finetuned.ckpt")
    return p.parse_args()


def load_batch(date: str, cache: Path) -> Batch:
    day = datetime.strptime(date, "%Y-%m-%d")
    times = [day - timedelta(hours=6), day]
    ds = xr.open_zarr(fsspec.get_mapper(WB2_HRES), chunks=None).sel(time=times)

    static_path = cache / "aurora-0.1-static.pickle"
    if not static_path.exists():
        with fsspec.open(STATIC, "rb") as src, open(static_path, "wb") as dst:
            dst.write(src.read())
    with open(static_path, "rb") as f:
        static_vars = pickle.load(f)

    def _prepare(x: np.ndarray) -> torch.Tensor:
        # insert a batch dimension; the model wants latitudes decreasing
        return torch.from_numpy(x[None][..., ::-1, :].copy())

    return Batch(
        surf_vars={
            "2t": _prepare(ds["2m_temperature"].values),
            "10u": _prepare(ds["10m_u_component_of_wind"].values),
            "10v": _prepare(ds["10m_v_component_of_wind"].values),
            "msl": _prepare(ds["mean_sea_level_pressure"].values),
        },
        static_vars={k: torch.from_numpy(v) for k, v in static_vars.items()},
        atmos_vars={
            "t": _prepare(ds["temperature"].values),
            "u": _prepare(ds["u_component_of_wind"].values),
            "v": _prepare(ds["v_component_of_wind"].values),
            "q": _prepare(ds["specific_humidity"].values),
            "z": _prepare(ds["geopotential"].values),
        },
        metadata=Metadata(
            lat=torch.from_numpy(ds.latitude.values[::-1].copy()),
            lon=torch.from_numpy(ds.longitude.values),
            time=(day,),
            atmos_levels=tuple(int(level) for level in ds.level.values),
        ),
    )


def main():
    args = parse_args()
    cache = Path(args.cache).expanduser()
    cache.mkdir(parents=True, exist_ok=True)

    batch = load_batch(args.date, cache)

    model = Aurora(use_lora=False, autocast=True)  # bf16 autocast inside the backbone
    model.load_checkpoint("microsoft/aurora", args.checkpoint)
    model.eval()
    model = model.to("cuda")

    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()

    preds = []
    with torch.inference_mode():
        for pred in rollout(model, batch, steps=args.steps):
            preds.append(pred.to("cpu"))

    print(f"peak GPU memory: {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB")

    model = model.to("cpu")

    # stack predictions into an xarray dataset
    lat = preds[0].metadata.lat.numpy()
    lon = preds[0].metadata.lon.numpy()
    levels = list(preds[0].metadata.atmos_levels)
    valid = [p.metadata.time[0] for p in preds]
    data_vars = {}
    for name in preds[0].surf_vars:
        data_vars[name] = (("time", "lat", "lon"), np.stack([p.surf_vars[name][0, -1].numpy() for p in preds]))
    for name in preds[0].atmos_vars:
        data_vars[name] = (("time", "level", "lat", "lon"), np.stack([p.atmos_vars[name][0, -1].numpy() for p in preds]))
    out = xr.Dataset(data_vars, coords={"time": valid, "level": levels, "lat": lat, "lon": lon})
    out.to_netcdf(args.out)
    print(f"wrote {args.out}: {len(preds)} steps")


if __name__ == "__main__":
    main()

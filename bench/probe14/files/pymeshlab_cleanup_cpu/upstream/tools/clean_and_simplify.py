#!/usr/bin/env python3
"""Post-process meshes extracted by marching cubes (NeuS / MonoSDF / 2DGS output).

Removes small floating components, fills holes, decimates with quadric edge
collapse and re-computes normals. Everything here runs on the CPU through
pymeshlab / trimesh, so it can be run on a laptop or on the login node of a
GPU cluster without touching CUDA.

    python tools/clean_and_simplify.py --in exps/scan65/meshes --out exps/scan65/clean \
        --target-faces 200000 --min-component-diameter 0.05
"""
import argparse
import glob
import json
import multiprocessing as mp
import os
import time

import numpy as np
import pymeshlab
import trimesh


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--in", dest="inp", required=True, help="mesh file or folder with .ply/.obj meshes")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--target-faces", type=int, default=200_000)
    p.add_argument("--min-component-diameter", type=float, default=0.05,
                   help="remove connected components smaller than this fraction of the bbox diagonal")
    p.add_argument("--hole-size", type=int, default=100, help="max hole size (edges) to close")
    p.add_argument("--workers", type=int, default=max(1, mp.cpu_count() // 2),
                   help="parallel CPU workers (no GPU / CUDA device is used)")
    p.add_argument("--device", default="cpu", help="kept for CLI compatibility with the GPU tools; ignored")
    p.add_argument("--taubin", action="store_true", help="apply Taubin smoothing after decimation")
    return p.parse_args()


def list_meshes(path):
    if os.path.isfile(path):
        return [path]
    files = []
    for ext in ("ply", "obj", "off"):
        files += glob.glob(os.path.join(path, f"*.{ext}"))
    return sorted(files)


def clean_one(job):
    src, dst, cfg = job
    t0 = time.time()
    ms = pymeshlab.MeshSet()
    ms.load_new_mesh(src)
    n_faces_in = ms.current_mesh().face_number()

    # 1) topology clean-up
    ms.meshing_remove_duplicate_vertices()
    ms.meshing_remove_duplicate_faces()
    ms.meshing_remove_null_faces()
    ms.meshing_remove_unreferenced_vertices()

    # 2) drop floaters (marching-cubes noise far from the surface)
    ms.meshing_remove_connected_component_by_diameter(
        mincomponentdiag=pymeshlab.PercentageValue(cfg["min_component_diameter"] * 100.0)
    )

    # 3) make it (mostly) manifold and close small holes
    ms.meshing_repair_non_manifold_edges(method="Remove Faces")
    ms.meshing_close_holes(maxholesize=cfg["hole_size"])

    # 4) quadric decimation
    if ms.current_mesh().face_number() > cfg["target_faces"]:
        ms.meshing_decimation_quadric_edge_collapse(
            targetfacenum=cfg["target_faces"],
            preserveboundary=True,
            preservenormal=True,
            preservetopology=True,
            qualitythr=0.5,
        )

    if cfg["taubin"]:
        ms.apply_coord_taubin_smoothing(stepsmoothnum=10)

    ms.compute_normal_per_vertex()
    ms.save_current_mesh(dst, save_vertex_normal=True)

    # sanity statistics with trimesh (also CPU only)
    mesh = trimesh.load(dst, process=False)
    stats = {
        "src": src,
        "dst": dst,
        "faces_in": int(n_faces_in),
        "faces_out": int(len(mesh.faces)),
        "watertight": bool(mesh.is_watertight),
        "area": float(mesh.area),
        "volume": float(mesh.volume) if mesh.is_watertight else None,
        "euler": int(mesh.euler_number),
        "seconds": round(time.time() - t0, 2),
    }
    return stats


def summarize(stats, out_dir):
    faces_in = np.array([s["faces_in"] for s in stats])
    faces_out = np.array([s["faces_out"] for s in stats])
    summary = {
        "n_meshes": len(stats),
        "mean_reduction": float(np.mean(1.0 - faces_out / np.maximum(faces_in, 1))),
        "n_watertight": int(sum(s["watertight"] for s in stats)),
        "total_seconds": float(sum(s["seconds"] for s in stats)),
    }
    with open(os.path.join(out_dir, "clean_stats.json"), "w") as f:
        json.dump({"summary": summary, "meshes": stats}, f, indent=2)
    return summary


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    cfg = {
        "target_faces": args.target_faces,
        "min_component_diameter": args.min_component_diameter,
        "hole_size": args.hole_size,
        "taubin": args.taubin,
    }
    meshes = list_meshes(args.inp)
    if not meshes:
        raise SystemExit(f"no meshes found in {args.inp}")

    jobs = [(m, os.path.join(args.out, os.path.splitext(os.path.basename(m))[0] + "_clean.ply"), cfg)
            for m in meshes]
    print(f"cleaning {len(jobs)} meshes with {args.workers} CPU workers (device={args.device} is ignored)")
    if args.workers > 1:
        with mp.Pool(args.workers) as pool:
            stats = pool.map(clean_one, jobs)
    else:
        stats = [clean_one(j) for j in jobs]

    summary = summarize(stats, args.out)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()

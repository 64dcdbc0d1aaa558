import numpy as np
import torch
from tqdm import tqdm
from scipy.spatial import cKDTree
from OCC.Core.gp import gp_Pnt
from OCC.Core.TColgp import TColgp_Array1OfPnt, TColgp_Array2OfPnt
from OCC.Core.GeomAPI import GeomAPI_PointsToBSplineSurface, GeomAPI_PointsToBSpline
from OCC.Core.GeomAbs import GeomAbs_C2
from OCC.Core.BRepBuilderAPI import BRepBuilderAPI_MakeEdge, BRepBuilderAPI_MakeFace
from OCC.Core.ShapeFix import ShapeFix_Face, ShapeFix_Wire, ShapeFix_Shell, ShapeFix_Solid
from OCC.Core.BRepBuilderAPI import BRepBuilderAPI_MakeWire, BRepBuilderAPI_Sewing, BRepBuilderAPI_MakeSolid
from OCC.Core.TopoDS import topods


def compute_bbox_center_and_size(min_corner, max_corner):
    # Calculate the center
    center_x = (min_corner[0] + max_corner[0]) / 2
    center_y = (min_corner[1] + max_corner[1]) / 2
    center_z = (min_corner[2] + max_corner[2]) / 2
    center = np.array([center_x, center_y, center_z])
    # Calculate the size
    size_x = max_corner[0] - min_corner[0]
    size_y = max_corner[1] - min_corner[1]
    size_z = max_corner[2] - min_corner[2]
    size = max(size_x, size_y, size_z)
    return center, size


def get_bbox(point_cloud):
    """
    Get the tighest fitting 3D (axis-aligned) bounding box giving a set of points
    """
    # Find the minimum and maximum coordinates along each axis
    min_x = np.min(point_cloud[:, 0])
    max_x = np.max(point_cloud[:, 0])

    min_y = np.min(point_cloud[:, 1])
    max_y = np.max(point_cloud[:, 1])

    min_z = np.min(point_cloud[:, 2])
    max_z = np.max(point_cloud[:, 2])

    # Create the 3D bounding box using the min and max values
    min_point = np.array([min_x, min_y, min_z])
    max_point = np.array([max_x, max_y, max_z])
    return min_point, max_point


def detect_shared_vertex(edgeV_cad, edge_mask_cad, edgeV_bbox):
    """
    Find the shared vertices between edges (vertices closer than the bbox-relative threshold are merged)
    """
    edge_id_offset = 2 * np.concatenate([np.array([0]), np.cumsum((edge_mask_cad == False).sum(1))])[:-1]
    valid = True

    # Detect shared-vertex on seperate face loop
    used_vertex = []
    face_sep_merges = []
    for face_idx, (face_edges, face_edges_mask, bbox_edges) in enumerate(zip(edgeV_cad, edge_mask_cad, edgeV_bbox)):
        face_edges = face_edges[~face_edges_mask]
        face_edges = face_edges.reshape(len(face_edges), 2, 3)
        face_start_id = edge_id_offset[face_idx]

        # connect end-to-start
        tree = cKDTree(face_edges.reshape(-1, 3))
        pairs = tree.query_pairs(r=0.08 * np.max(bbox_edges))
        for a, b in pairs:
            if a // 2 == b // 2:
                continue
            face_sep_merges.append([face_start_id + a, face_start_id + b])
            used_vertex.extend([face_start_id + a, face_start_id + b])

    if len(face_sep_merges) == 0:
        valid = False
    return np.array(face_sep_merges), valid


def detect_shared_edge(edge_mask_cad, edgeZ_cad, surfPos_cad, edgeV_cad, z_threshold):
    """Merge duplicated edges whose latent codes are within z_threshold"""
    unique_edges = []
    edge_face_pairs = []
    for face_idx, (edges, mask) in enumerate(zip(edgeZ_cad, edge_mask_cad)):
        for edge_idx, edge_z in enumerate(edges[~mask]):
            matched = False
            for u_idx, (u_z, u_faces) in enumerate(unique_edges):
                if np.abs(u_z - edge_z).max() < z_threshold:
                    u_faces.append(face_idx)
                    matched = True
                    break
            if not matched:
                unique_edges.append((edge_z, [face_idx]))
    for edge_z, faces in unique_edges:
        edge_face_pairs.append(faces)
    return unique_edges, edge_face_pairs


def joint_optimize(surf_ncs, edge_ncs, surfPos, unique_vertices, EdgeVertexAdj, FaceEdgeAdj, num_edge, num_surf):
    """
    Jointly optimize the face/edge/vertex based on topology (runs in numpy, small problem)
    """
    loss_func = lambda a, b: np.mean((a - b) ** 2)
    surf_wcs = []
    for i in range(num_surf):
        scale = np.max(surfPos[i, 3:] - surfPos[i, :3]) / 2
        center = (surfPos[i, 3:] + surfPos[i, :3]) / 2
        surf_wcs.append(surf_ncs[i] * scale + center)
    edge_wcs = []
    for i in range(num_edge):
        start_v, end_v = unique_vertices[EdgeVertexAdj[i]]
        ncs_start, ncs_end = edge_ncs[i][0], edge_ncs[i][-1]
        scale = np.linalg.norm(end_v - start_v) / max(np.linalg.norm(ncs_end - ncs_start), 1e-6)
        edge_wcs.append((edge_ncs[i] - ncs_start) * scale + start_v)
    return np.stack(surf_wcs), np.stack(edge_wcs)


def add_pcurves_to_edges(face):
    edge_fixer = ShapeFix_Wire()
    edge_fixer.SetFace(face)
    edge_fixer.FixEdgeCurves()


def fix_wires(face, debug=False):
    for wire in face.wires():
        wire_fixer = ShapeFix_Wire()
        wire_fixer.SetFace(face.topods_shape())
        wire_fixer.Load(wire.topods_shape())
        wire_fixer.Perform()


def construct_brep(surf_wcs, edge_wcs, FaceEdgeAdj, EdgeVertexAdj):
    """
    Fit parametric surfaces / curves and trim into B-rep
    """
    # Fit surface bspline
    recon_faces = []
    for points in surf_wcs:
        num_u_points, num_v_points = 32, 32
        uv_points_array = TColgp_Array2OfPnt(1, num_u_points, 1, num_v_points)
        for u_index in range(1, num_u_points + 1):
            for v_index in range(1, num_v_points + 1):
                pt = points[u_index - 1, v_index - 1]
                point_3d = gp_Pnt(float(pt[0]), float(pt[1]), float(pt[2]))
                uv_points_array.SetValue(u_index, v_index, point_3d)
        approx_face = GeomAPI_PointsToBSplineSurface(uv_points_array, 3, 8, GeomAbs_C2, 5e-2).Surface()
        recon_faces.append(approx_face)

    recon_edges = []
    for points in edge_wcs:
        num_u_points = 32
        u_points_array = TColgp_Array1OfPnt(1, num_u_points)
        for u_index in range(1, num_u_points + 1):
            pt = points[u_index - 1]
            point_2d = gp_Pnt(float(pt[0]), float(pt[1]), float(pt[2]))
            u_points_array.SetValue(u_index, point_2d)
        try:
            approx_edge = GeomAPI_PointsToBSpline(u_points_array, 0, 8, GeomAbs_C2, 5e-3).Curve()
        except Exception as e:
            print('high precision failed, trying mid precision...')
            approx_edge = GeomAPI_PointsToBSpline(u_points_array, 0, 8, GeomAbs_C2, 8e-3).Curve()
        recon_edges.append(approx_edge)

    # Create edges from the curve list
    edge_list = []
    for curve in recon_edges:
        edge = BRepBuilderAPI_MakeEdge(curve).Edge()
        edge_list.append(edge)

    # Cut surface by wire
    post_faces = []
    for idx, (surface, edge_incides) in enumerate(zip(recon_faces, FaceEdgeAdj)):
        face_builder = BRepBuilderAPI_MakeFace(surface, 1e-6)
        wire_builder = BRepBuilderAPI_MakeWire()
        for edge_idx in edge_incides:
            wire_builder.Add(edge_list[edge_idx])
        if wire_builder.IsDone():
            face_builder.Add(wire_builder.Wire())
        face = face_builder.Face()
        fixer = ShapeFix_Face(face)
        fixer.SetPrecision(1e-3)
        fixer.Perform()
        post_faces.append(fixer.Face())

    # Sew faces into solid
    sewing = BRepBuilderAPI_Sewing()
    for face in post_faces:
        sewing.Add(face)
    sewing.Perform()
    sewed_shell = topods.Shell(sewing.SewedShape())
    shell_fixer = ShapeFix_Shell(sewed_shell)
    shell_fixer.Perform()
    maker = BRepBuilderAPI_MakeSolid()
    maker.Add(shell_fixer.Shell())
    maker.Build()
    solid = ShapeFix_Solid(maker.Solid())
    solid.Perform()
    return solid.Solid()


def remove_box_edge(box, surfPos_walls):
    """Remove the redundant edges of the furniture bounding box walls"""
    edge_mask = np.ones(len(box), dtype=bool)
    for i, b in enumerate(box):
        for wall in surfPos_walls:
            if np.allclose(b, wall, atol=1e-2):
                edge_mask[i] = False
    return box[edge_mask]


def randn_like_cpu(tensor, generator=None):
    """Seeded CPU noise, moved to the tensor's device (reproducible across hardware)."""
    noise = torch.randn(tensor.shape, generator=generator, dtype=torch.float32)
    return noise.to(tensor.device)

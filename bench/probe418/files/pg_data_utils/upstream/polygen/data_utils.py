"""
Mesh data utilities for PolyGen: OBJ reading, vertex quantization, face
ordering, and the torch Dataset / collate functions used by train.py.

Port of deepmind-research/polygen/data_utils.py (numpy parts are unchanged,
the tf.data pipeline is replaced by a torch Dataset).
"""

import glob
import os
import random

import networkx as nx
import numpy as np
import torch
from torch.nn.utils.rnn import pad_sequence


def read_obj(obj_path):
    """Read vertices and faces from .obj file."""
    vertex_list = []
    flat_vertices_list = []
    flat_vertices_indices = {}
    flat_triangles = []

    with open(obj_path) as obj_file:
        for line in obj_file:
            tokens = line.split()
            if not tokens:
                continue
            line_type = tokens[0]
            # We skip lines not starting with v or f.
            if line_type == 'v':
                vertex_list.append([float(x) for x in tokens[1:]])
            elif line_type == 'f':
                triangle = []
                for i in range(len(tokens) - 1):
                    vertex_name = tokens[i + 1]
                    if vertex_name in flat_vertices_indices:
                        triangle.append(flat_vertices_indices[vertex_name])
                        continue
                    flat_vertex = []
                    for index in vertex_name.split('/'):
                        if not index:
                            continue
                        # obj triangle indices are 1 indexed, so subtract 1 here.
                        flat_vertex += vertex_list[int(index) - 1]
                    flat_vertex_index = len(flat_vertices_list)
                    flat_vertices_list.append(flat_vertex)
                    flat_vertices_indices[vertex_name] = flat_vertex_index
                    triangle.append(flat_vertex_index)
                flat_triangles.append(triangle)

    return np.array(flat_vertices_list, dtype=np.float32), flat_triangles


def quantize_verts(verts, n_bits=8):
    """Convert vertices in [-1., 1.] to discrete values in [0, n_bits**2 - 1]."""
    min_range = -0.5
    max_range = 0.5
    range_quantize = 2 ** n_bits - 1
    verts_quantize = (verts - min_range) * range_quantize / (max_range - min_range)
    return verts_quantize.astype('int32')


def dequantize_verts(verts, n_bits=8, add_noise=False):
    """Convert quantized vertices to floats."""
    min_range = -0.5
    max_range = 0.5
    range_quantize = 2 ** n_bits - 1
    verts = verts.astype('float32')
    verts = verts * (max_range - min_range) / range_quantize + min_range
    if add_noise:
        verts += np.random.uniform(size=verts.shape) * (1 / range_quantize)
    return verts


def face_to_cycles(face):
    """Find cycles in face."""
    g = nx.Graph()
    for v in range(len(face) - 1):
        g.add_edge(face[v], face[v + 1])
    g.add_edge(face[-1], face[0])
    return list(nx.cycle_basis(g))


def flatten_faces(faces):
    """Converts from list of faces to flat face array with stopping indices."""
    if not faces:
        return np.array([0])
    else:
        l = [f + [-1] for f in faces[:-1]]
        l += [faces[-1] + [-2]]
        return np.array([item for sublist in l for item in sublist]) + 2  # pylint: disable=g-complex-comprehension


def unflatten_faces(flat_faces):
    """Converts from flat face sequence to a list of separate faces."""
    def group(seq):
        g = []
        for el in seq:
            if el == 0 or el == -1:
                yield g
                g = []
            else:
                g.append(el - 1)
        yield g
    outputs = list(group(flat_faces - 1))[:-1]
    # Remove empty faces
    return [o for o in outputs if len(o) > 2]


def center_vertices(vertices):
    """Translate the vertices so that bounding box is centered at zero."""
    vert_min = vertices.min(axis=0)
    vert_max = vertices.max(axis=0)
    vert_center = 0.5 * (vert_min + vert_max)
    return vertices - vert_center


def normalize_vertices_scale(vertices):
    """Scale the vertices so that the long diagonal of the bounding box is one."""
    vert_min = vertices.min(axis=0)
    vert_max = vertices.max(axis=0)
    extents = vert_max - vert_min
    scale = np.sqrt(np.sum(extents ** 2))
    return vertices / scale


def quantize_process_mesh(vertices, faces, tris=None, quantization_bits=8):
    """Quantize vertices, remove resulting duplicates and reindex faces."""
    vertices = quantize_verts(vertices, quantization_bits)
    vertices, inv = np.unique(vertices, axis=0, return_inverse=True)

    # Sort vertices by z then y then x.
    sort_inds = np.lexsort(vertices.T)
    vertices = vertices[sort_inds]

    # Re-index faces and tris to re-ordered vertices.
    faces = [np.argsort(sort_inds)[inv[f]] for f in faces]
    if tris is not None:
        tris = np.array([np.argsort(sort_inds)[inv[t]] for t in tris])

    # Merging duplicate vertices and re-indexing the faces causes some faces to
    # contain loops (e.g [2, 3, 5, 2, 4]). Split these faces into distinct
    # sub-faces.
    sub_faces = []
    for f in faces:
        cliques = face_to_cycles(f)
        for c in cliques:
            c_length = len(c)
            # Only append faces with more than two verts.
            if c_length > 2:
                d = np.argmin(c)
                # Cyclically permute faces just that first index is the smallest.
                sub_faces.append([c[(d + i) % c_length] for i in range(c_length)])
    faces = sub_faces
    if tris is not None:
        tris = np.array([v for v in tris if len(set(v)) == len(v)])

    # Sort faces by lowest vertex indices. If two faces have the same lowest
    # index then sort by next lowest and so on.
    faces.sort(key=lambda f: tuple(sorted(f)))
    if tris is not None:
        tris = tris.tolist()
        tris.sort(key=lambda f: tuple(sorted(f)))
        tris = np.array(tris)

    # After removing degenerate faces some vertices are now unreferenced.
    # Remove these.
    num_verts = vertices.shape[0]
    vert_connected = np.equal(
        np.arange(num_verts)[:, None], np.hstack(faces)[None]).any(axis=-1)
    vertices = vertices[vert_connected]

    # Re-index faces and tris to re-ordered vertices.
    vert_indices = (
        np.arange(num_verts) - np.cumsum(1 - vert_connected.astype('int')))
    faces = [vert_indices[f].tolist() for f in faces]
    if tris is not None:
        tris = np.array([vert_indices[t].tolist() for t in tris])

    return vertices, faces, tris


def load_process_mesh(mesh_obj_path, quantization_bits=8):
    """Load obj file and process."""
    # Load mesh
    vertices, faces = read_obj(mesh_obj_path)
    # Transpose so that z-axis is vertical.
    vertices = vertices[:, [2, 0, 1]]

    # Translate the vertices so that bounding box is centered at zero.
    vertices = center_vertices(vertices)

    # Scale the vertices so that the long diagonal of the bounding box is equal
    # to one.
    vertices = normalize_vertices_scale(vertices)

    # Quantize and sort vertices, remove resulting duplicates, sort and reindex
    # faces.
    vertices, faces, _ = quantize_process_mesh(
        vertices, faces, quantization_bits=quantization_bits)

    # Flatten faces and add 'new face' = 1 and 'stop' = 0 tokens.
    faces = flatten_faces(faces)

    # Discard degenerate meshes without faces.
    return {
        'vertices': vertices,
        'faces': faces,
    }


def random_shift(vertices, shift_factor=0.25):
    """Apply random shift to vertices."""
    max_shift_pos = (255 - np.max(vertices, axis=0)).astype(np.float32)
    max_shift_pos = np.maximum(max_shift_pos, 1e-9)
    max_shift_neg = (np.min(vertices, axis=0)).astype(np.float32)
    max_shift_neg = np.maximum(max_shift_neg, 1e-9)
    shift = np.random.uniform(
        -np.minimum(max_shift_neg, shift_factor * 255),
        np.minimum(max_shift_pos, shift_factor * 255), size=(1, 3))
    vertices = vertices + shift.astype(np.int32)
    return np.clip(vertices, 0, 255)


class PolygenDataset(torch.utils.data.Dataset):
    def __init__(self, data_dir, split='train', quantization_bits=8, max_num_verts=800,
                 max_num_face_indices=2800, augment=True):
        self.files = sorted(glob.glob(os.path.join(data_dir, split, '**', '*.obj'), recursive=True))
        self.quantization_bits = quantization_bits
        self.max_num_verts = max_num_verts
        self.max_num_face_indices = max_num_face_indices
        self.augment = augment and split == 'train'
        self.class_names = sorted({os.path.basename(os.path.dirname(f)) for f in self.files})
        self.class_to_idx = {c: i for i, c in enumerate(self.class_names)}
        self.meshes = []
        for f in self.files:
            mesh = load_process_mesh(f, quantization_bits)
            if len(mesh['vertices']) > max_num_verts or len(mesh['faces']) > max_num_face_indices:
                continue
            mesh['class_label'] = self.class_to_idx[os.path.basename(os.path.dirname(f))]
            self.meshes.append(mesh)
        print(f'{split}: kept {len(self.meshes)} / {len(self.files)} meshes')

    def __len__(self):
        return len(self.meshes)

    def __getitem__(self, idx):
        mesh = self.meshes[idx]
        vertices = mesh['vertices']
        if self.augment:
            vertices = random_shift(vertices)
        return {
            'vertices': torch.from_numpy(vertices.astype(np.int64)),
            'faces': torch.from_numpy(mesh['faces'].astype(np.int64)),
            'class_label': torch.tensor(mesh['class_label']),
        }


def collate_vertex_model_batch(items):
    # z, y, x flattening; +1 so that 0 is the stopping token
    flat = [torch.cat([it['vertices'][:, [2, 1, 0]].reshape(-1) + 1, torch.zeros(1, dtype=torch.long)])
            for it in items]
    vertices_flat = pad_sequence(flat, batch_first=True, padding_value=0)
    lengths = torch.tensor([len(f) for f in flat])
    mask = (torch.arange(vertices_flat.shape[1])[None] < lengths[:, None]).float()
    return {
        'vertices_flat': vertices_flat,
        'vertices_flat_mask': mask,
        'class_label': torch.stack([it['class_label'] for it in items]),
    }


def collate_face_model_batch(items, quantization_bits=8):
    verts = [torch.from_numpy(dequantize_verts(it['vertices'].numpy(), quantization_bits)) for it in items]
    vertices = pad_sequence(verts, batch_first=True, padding_value=0.)
    v_len = torch.tensor([len(v) for v in verts])
    vertices_mask = (torch.arange(vertices.shape[1])[None] < v_len[:, None]).float()
    faces = pad_sequence([it['faces'] for it in items], batch_first=True, padding_value=0)
    f_len = torch.tensor([len(it['faces']) for it in items])
    faces_mask = (torch.arange(faces.shape[1])[None] < f_len[:, None]).float()
    return {
        'vertices': vertices,
        'vertices_mask': vertices_mask,
        'faces': faces,
        'faces_mask': faces_mask,
        'class_label': torch.stack([it['class_label'] for it in items]),
    }


def write_obj(vertices, faces, file_path, transpose=True, scale=1.):
    """Write vertices and faces to obj."""
    if transpose:
        vertices = vertices[:, [1, 2, 0]]
    vertices *= scale
    if faces is not None:
        if min(min(faces)) == 0:
            f_add = 1
        else:
            f_add = 0
    with open(file_path, 'w') as f:
        for v in vertices:
            f.write('v {} {} {}\n'.format(v[0], v[1], v[2]))
        for face in faces:
            line = 'f'
            for i in face:
                line += ' {}'.format(i + f_add)
            line += '\n'
            f.write(line)

import numpy as np
import csv

sample_rate = 32000
clip_samples = sample_rate * 10     # Audio clips are 10-second

# Load label
with open('metadata/class_labels_indices.csv', 'r') as f:
    reader = csv.reader(f, delimiter=',')
    lines = list(reader)

labels = []
ids = []    # Each label has a unique id such as "/m/068hy"
for i1 in range(1, len(lines)):
    id = lines[i1][1]
    label = lines[i1][2]
    ids.append(id)
    labels.append(label)

classes_num = len(labels)

lb_to_ix = {label : i for i, label in enumerate(labels)}
ix_to_lb = {i : label for i, label in enumerate(labels)}

id_to_ix = {id : i for i, id in enumerate(ids)}
ix_to_id = {i : id for i, id in enumerate(ids)}

full_samples_per_class = np.array([
        937432, 16344, 7822, 10271, 2043, 14420, 733, 1511,
        1258, 424, 1751, 704, 369, 590, 1063, 1375,
        5026, 743, 853, 1648, 714, 1497, 1251, 2139,
        1093, 133, 224, 39469, 6423, 407, 1559, 4546,
        6826, 7464, 2468, 549, 4063, 334, 587, 238,
        1766, 691, 114, 2153, 236, 209, 421, 740,
        269, 959, 137, 4192, 485, 15444, 1155, 2085])

# Bird-related AudioSet classes used when fine-tuning on species data
bird_class_ids = ['/m/015p6', '/m/020bb7', '/m/07pggtn', '/m/07sx8x_',
    '/m/0h0rv', '/m/07r_25d', '/m/04s8yn', '/m/07r5c2p', '/m/09d5_',
    '/m/07r_80w', '/m/05_wcq']

import copy
import itertools
import json
import logging
from collections import Counter, namedtuple, defaultdict

import torch
from torch.utils.data import Dataset

from graph import Graph
from util import enumerate_spans

logger = logging.getLogger(__name__)

instance_fields = [
    'sent_id', 'tokens', 'pieces', 'piece_idxs', 'token_lens', 'attention_mask',
    'entity_label_idxs', 'trigger_label_idxs',
    'entity_type_idxs', 'event_type_idxs',
    'relation_type_idxs', 'role_type_idxs',
    'mention_type_idxs',
    'graph', 'entity_num', 'trigger_num'
]

batch_fields = [
    'sent_ids', 'tokens', 'piece_idxs', 'token_lens', 'attention_masks',
    'entity_label_idxs', 'trigger_label_idxs',
    'entity_type_idxs', 'event_type_idxs', 'mention_type_idxs',
    'relation_type_idxs', 'role_type_idxs',
    'graphs', 'token_nums'
]

Instance = namedtuple('Instance', field_names=instance_fields,
                      defaults=[None] * len(instance_fields))
Batch = namedtuple('Batch', field_names=batch_fields,
                   defaults=[None] * len(batch_fields))


def remove_overlap_entities(entities):
    """Keep the first of overlapping entity mentions and map the others to it."""
    tokens = [None] * 1000
    entities_, id_map = [], {}
    for entity in entities:
        start, end = entity['start'], entity['end']
        overlap = [tokens[i] for i in range(start, end) if tokens[i]]
        if overlap:
            id_map[entity['id']] = overlap[0]
            continue
        entities_.append(entity)
        for i in range(start, end):
            tokens[i] = entity['id']
    return entities_, id_map


def get_entity_labels(entities, token_num):
    """Convert entity mentions in a sentence to an entity label sequence with
    the length of token_num
    CHECKED
    :param entities (list): a list of entity mentions.
    :param token_num (int): the number of tokens.
    :return:a sequence of BIO format labels.
    """
    labels = ['O'] * token_num
    count = 0
    for entity in entities:
        start, end = entity['start'], entity['end']
        if end > token_num:
            continue
        entity_type = entity['entity_type']
        if any([labels[i] != 'O' for i in range(start, end)]):
            continue
        labels[start] = 'B-{}'.format(entity_type)
        for i in range(start + 1, end):
            labels[i] = 'I-{}'.format(entity_type)
        count += 1
    return labels


def get_trigger_labels(events, token_num):
    """Convert event mentions in a sentence to a trigger label sequence with the
    length of token_num.
    :param events (list): a list of event mentions.
    :param token_num (int): the number of tokens.
    :return: a sequence of BIO format labels.
    """
    labels = ['O'] * token_num
    for event in events:
        trigger = event['trigger']
        start, end = trigger['start'], trigger['end']
        if end > token_num:
            continue
        event_type = event['event_type']
        labels[start] = 'B-{}'.format(event_type)
        for i in range(start + 1, end):
            labels[i] = 'I-{}'.format(event_type)
    return labels


def get_relation_types(entities, relations, id_map, directional=False,
                       symmetric=None):
    entity_num = len(entities)
    labels = [['O'] * entity_num for _ in range(entity_num)]
    entity_idxs = {entity['id']: i for i, entity in enumerate(entities)}
    for relation in relations:
        entity_1 = entity_2 = -1
        for arg in relation['arguments']:
            entity_id = arg['entity_id']
            entity_id = id_map.get(entity_id, entity_id)
            if arg['role'] == 'Arg-1':
                entity_1 = entity_idxs[entity_id]
            elif arg['role'] == 'Arg-2':
                entity_2 = entity_idxs[entity_id]
        if entity_1 == -1 or entity_2 == -1:
            continue
        labels[entity_1][entity_2] = relation['relation_type']
        if not directional:
            labels[entity_2][entity_1] = relation['relation_type']
        if symmetric and relation['relation_type'] in symmetric:
            labels[entity_2][entity_1] = relation['relation_type']
    return labels


def get_relation_list(entities, relations, vocab,
                      directional=False, symmetric=None):
    entity_idxs = {entity['id']: (i, entity) for i, entity in enumerate(entities)}
    visited = [[0] * len(entities) for _ in range(len(entities))]
    relation_list = []
    for relation in relations:
        arg_1 = arg_2 = None
        for arg in relation['arguments']:
            if arg['role'] == 'Arg-1':
                arg_1 = entity_idxs[arg['entity_id']]
            elif arg['role'] == 'Arg-2':
                arg_2 = entity_idxs[arg['entity_id']]
        if arg_1 is None or arg_2 is None:
            continue
        relation_type = relation['relation_type']
        if (not directional and arg_1[0] > arg_2[0]) or \
                (directional and symmetric and relation_type in symmetric and arg_1[0] > arg_2[0]):
            arg_1, arg_2 = arg_2, arg_1
        if visited[arg_1[0]][arg_2[0]] == 0:
            relation_list.append((arg_1[0], arg_2[0], vocab[relation_type]))
            visited[arg_1[0]][arg_2[0]] = 1

    relation_list.sort(key=lambda x: (x[0], x[1]))
    return relation_list


def get_role_types(entities, events, id_map):
    labels = [['O'] * len(entities) for _ in range(len(events))]
    entity_idxs = {entity['id']: i for i, entity in enumerate(entities)}
    for event_idx, event in enumerate(events):
        for arg in event['arguments']:
            entity_id = arg['entity_id']
            entity_id = id_map.get(entity_id, entity_id)
            entity_idx = entity_idxs[entity_id]
            if labels[event_idx][entity_idx] != 'O':
                print('Conflict argument role {} {} {}'.format(
                    event['trigger']['text'], arg['text'], arg['role']))
            labels[event_idx][entity_idx] = arg['role']
    return labels


def get_role_list(entities, events, vocab):
    entity_idxs = {entity['id']: (i, entity) for i, entity in enumerate(entities)}
    visited = [[0] * len(entities) for _ in range(len(events))]
    role_list = []
    for i, event in enumerate(events):
        for arg in event['arguments']:
            entity_idx = entity_idxs[arg['entity_id']]
            if visited[i][entity_idx[0]] == 0:
                role_list.append((i, entity_idx[0], vocab[arg['role']]))
                visited[i][entity_idx[0]] = 1
    role_list.sort(key=lambda x: (x[0], x[1]))
    return role_list


class IEDataset(Dataset):
    def __init__(self, path, gpu=False, max_length=128, ignore_title=False,
                 relation_mask_self=True, relation_directional=False,
                 coref=False, symmetric_relations=None, test=False):
        self.path = path
        self.data = []
        self.gpu = gpu
        self.max_length = max_length
        self.ignore_title = ignore_title
        self.relation_mask_self = relation_mask_self
        self.relation_directional = relation_directional
        self.coref = coref
        if symmetric_relations is None:
            self.symmetric_relations = set()
        else:
            self.symmetric_relations = symmetric_relations
        self.test = test
        self.load_data()

    def __len__(self):
        return len(self.data)

    def __getitem__(self, item):
        return self.data[item]

    def load_data(self):
        """Load data from file."""
        overlength_num = title_num = 0
        with open(self.path, 'r', encoding='utf-8') as r:
            for line in r:
                inst = json.loads(line)
                inst_len = len(inst['pieces'])
                is_title = inst['sent_id'].endswith('-3') \
                    and inst['tokens'][-1] != '.' \
                    and len(inst['entity_mentions']) == 0
                if self.ignore_title and is_title:
                    title_num += 1
                    continue
                if self.max_length != -1 and inst_len > self.max_length - 2:
                    overlength_num += 1
                    continue
                self.data.append(inst)

        if overlength_num:
            print('Discarded {} overlength instances'.format(overlength_num))
        if title_num:
            print('Discarded {} titles'.format(title_num))
        print('Loaded {} instances from {}'.format(len(self), self.path))

    def numberize(self, tokenizer, vocabs):
        """Numberize word pieces, labels, etcs.
        :param tokenizer: Bert tokenizer.
        :param vocabs (dict): a dict of vocabularies.
        """
        entity_type_stoi = vocabs.get('entity_type', None)
        event_type_stoi = vocabs.get('event_type', None)
        relation_type_stoi = vocabs.get('relation_type', None)
        role_type_stoi = vocabs.get('role_type', None)
        mention_type_stoi = vocabs.get('mention_type', None)
        entity_label_stoi = vocabs.get('entity_label', None)
        trigger_label_stoi = vocabs.get('trigger_label', None)

        data = []
        for inst in self.data:
            tokens = inst['tokens']
            pieces = inst['pieces']
            sent_id = inst['sent_id']
            entities = inst['entity_mentions']
            entities, entity_id_map = remove_overlap_entities(entities)
            entities.sort(key=lambda x: x['start'])
            events = inst['event_mentions']
            events.sort(key=lambda x: x['trigger']['start'])
            events = [eve for eve in events if eve['trigger']['end'] <= len(tokens)]
            relations = inst.get('relation_mentions', [])
            token_num = len(tokens)
            token_lens = inst['token_lens']

            # Pad word pieces with special tokens
            piece_idxs = tokenizer.encode(pieces,
                                          add_special_tokens=True,
                                          max_length=self.max_length,
                                          truncation=True)
            pad_num = self.max_length - len(piece_idxs)
            attn_mask = [1] * len(piece_idxs) + [0] * pad_num
            piece_idxs = piece_idxs + [0] * pad_num

            # Entity
            # - entity_labels and entity_label_idxs are used for identification
            # - entity_types and entity_type_idxs are used for classification
            # - entity_list is used for graph representation
            entity_labels = get_entity_labels(entities, token_num)
            entity_label_idxs = [entity_label_stoi[l] for l in entity_labels]
            entity_types = [e['entity_type'] for e in entities]
            entity_type_idxs = [entity_type_stoi[e] for e in entity_types]
            entity_list = [(e['start'], e['end'], entity_type_stoi[e['entity_type']])
                           for e in entities]
            # entity_num = len(entity_list)
            mention_types = [e['mention_type'] for e in entities]
            mention_type_idxs = [mention_type_stoi[m] for m in mention_types]
            mention_list = [(i, j, mention_type_stoi[k]) for (i, j, _), k
                            in zip(entity_list, mention_types)]

            # Trigger
            trigger_labels = get_trigger_labels(events, token_num)
            trigger_label_idxs = [trigger_label_stoi[l]
                                  for l in trigger_labels]
            event_types = [e['event_type'] for e in events]
            event_type_idxs = [event_type_stoi[e] for e in event_types]
            trigger_list = [(e['trigger']['start'], e['trigger']['end'],
                             event_type_stoi[e['event_type']])
                            for e in events]

            # Relation
            relation_types = get_relation_types(entities, relations,
                                                entity_id_map,
                                                directional=self.relation_directional,
                                                symmetric=self.symmetric_relations)
            relation_type_idxs = [[relation_type_stoi[l] for l in ls]
                                  for ls in relation_types]
            if self.relation_mask_self:
                for i in range(len(relation_type_idxs)):
                    relation_type_idxs[i][i] = -100
            relation_list = get_relation_list(entities, relations,
                                              relation_type_stoi,
                                              directional=self.relation_directional,
                                              symmetric=self.symmetric_relations)

            # Argument role
            role_types = get_role_types(entities, events, entity_id_map)
            role_type_idxs = [[role_type_stoi[l] for l in ls]
                              for ls in role_types]
            role_list = get_role_list(entities, events, role_type_stoi)

            # Graph
            graph = Graph(
                entities=entity_list,
                triggers=trigger_list,
                relations=relation_list,
                roles=role_list,
                vocabs=vocabs,
                mentions=mention_list
            )

            instance = Instance(
                sent_id=sent_id,
                tokens=tokens,
                pieces=pieces,
                piece_idxs=piece_idxs,
                token_lens=token_lens,
                attention_mask=attn_mask,
                entity_label_idxs=entity_label_idxs,
                trigger_label_idxs=trigger_label_idxs,
                entity_type_idxs=entity_type_idxs,
                event_type_idxs=event_type_idxs,
                relation_type_idxs=relation_type_idxs,
                mention_type_idxs=mention_type_idxs,
                role_type_idxs=role_type_idxs,
                graph=graph,
                entity_num=len(entities),
                trigger_num=len(events),
            )
            data.append(instance)
        self.data = data

    def collate_fn(self, batch):
        batch_piece_idxs = []
        batch_tokens = []
        batch_entity_labels, batch_trigger_labels = [], []
        batch_entity_types, batch_event_types = [], []
        batch_relation_types, batch_role_types = [], []
        batch_mention_types = []
        batch_graphs = []
        batch_token_lens = []
        batch_attention_masks = []

        sent_ids = [inst.sent_id for inst in batch]
        token_nums = [len(inst.tokens) for inst in batch]
        max_token_num = max(token_nums)

        max_entity_num = max([inst.entity_num for inst in batch] + [1])
        max_trigger_num = max([inst.trigger_num for inst in batch] + [1])

        for inst in batch:
            token_num = len(inst.tokens)
            batch_piece_idxs.append(inst.piece_idxs)
            batch_attention_masks.append(inst.attention_mask)
            batch_token_lens.append(inst.token_lens)
            batch_graphs.append(inst.graph)
            batch_tokens.append(inst.tokens)
            # for identification
            batch_entity_labels.append(inst.entity_label_idxs +
                                       [0] * (max_token_num - token_num))
            batch_trigger_labels.append(inst.trigger_label_idxs +
                                        [0] * (max_token_num - token_num))
            # for classification
            batch_entity_types.extend(inst.entity_type_idxs +
                                      [-100] * (max_entity_num - inst.entity_num))
            batch_event_types.extend(inst.event_type_idxs +
                                     [-100] * (max_trigger_num - inst.trigger_num))
            batch_mention_types.extend(inst.mention_type_idxs +
                                       [-100] * (max_entity_num - inst.entity_num))
            for l in inst.relation_type_idxs:
                batch_relation_types.extend(
                    l + [-100] * (max_entity_num - inst.entity_num))
            batch_relation_types.extend(
                [-100] * max_entity_num * (max_entity_num - inst.entity_num))
            for l in inst.role_type_idxs:
                batch_role_types.extend(
                    l + [-100] * (max_entity_num - inst.entity_num))
            batch_role_types.extend(
                [-100] * max_entity_num * (max_trigger_num - inst.trigger_num))

        if self.gpu:
            batch_piece_idxs = torch.cuda.LongTensor(batch_piece_idxs)
            batch_attention_masks = torch.cuda.FloatTensor(
                batch_attention_masks)

            batch_entity_labels = torch.cuda.LongTensor(batch_entity_labels)
            batch_trigger_labels = torch.cuda.LongTensor(batch_trigger_labels)
            batch_entity_types = torch.cuda.LongTensor(batch_entity_types)
            batch_mention_types = torch.cuda.LongTensor(batch_mention_types)
            batch_event_types = torch.cuda.LongTensor(batch_event_types)
            batch_relation_types = torch.cuda.LongTensor(batch_relation_types)
            batch_role_types = torch.cuda.LongTensor(batch_role_types)
            token_nums = torch.cuda.LongTensor(token_nums)
        else:
            batch_piece_idxs = torch.LongTensor(batch_piece_idxs)
            batch_attention_masks = torch.FloatTensor(batch_attention_masks)

            batch_entity_labels = torch.LongTensor(batch_entity_labels)
            batch_trigger_labels = torch.LongTensor(batch_trigger_labels)
            batch_entity_types = torch.LongTensor(batch_entity_types)
            batch_mention_types = torch.LongTensor(batch_mention_types)
            batch_event_types = torch.LongTensor(batch_event_types)
            batch_relation_types = torch.LongTensor(batch_relation_types)
            batch_role_types = torch.LongTensor(batch_role_types)
            token_nums = torch.LongTensor(token_nums)

        return Batch(
            sent_ids=sent_ids,
            tokens=[inst.tokens for inst in batch],
            piece_idxs=batch_piece_idxs,
            token_lens=batch_token_lens,
            attention_masks=batch_attention_masks,
            entity_label_idxs=batch_entity_labels,
            trigger_label_idxs=batch_trigger_labels,
            entity_type_idxs=batch_entity_types,
            mention_type_idxs=batch_mention_types,
            event_type_idxs=batch_event_types,
            relation_type_idxs=batch_relation_types,
            role_type_idxs=batch_role_types,
            graphs=batch_graphs,
            token_nums=token_nums,
        )


class IEDatasetEval(Dataset):
    def __init__(self, path, max_length=128, gpu=False, input_format='txt',
                 language='english'):
        """
        :param path (str): path to the data file.
        :param max_length (int): max sentence length.
        :param gpu (bool): use GPU (default=False).
        :param input_format (str): input file format (txt or ltf, default='txt).
        """
        self.path = path
        self.data = []
        self.max_length = max_length
        self.gpu = gpu
        self.input_format = input_format
        self.language = language
        self.load_data()

    def __len__(self):
        return len(self.data)

    def __getitem__(self, item):
        return self.data[item]

    def load_data(self):
        with open(self.path, 'r', encoding='utf-8') as r:
            for line in r:
                inst = json.loads(line)
                self.data.append(inst)
        self.doc_id = self.data[0]['doc_id'] if self.data else None
        self.ori_sent_num = len(self.data)

    def numberize(self, tokenizer):
        data = []
        for i, (sent_id, sent_tokens) in enumerate(
                (inst['sent_id'], inst['tokens']) for inst in self.data):
            token_ids = [t[0] for t in sent_tokens]
            tokens = [t[1] for t in sent_tokens]
            pieces = [tokenizer.tokenize(t, is_split_into_words=True) for t in tokens]
            token_lens = [len(x) for x in pieces]
            if 0 in token_lens:
                raise ValueError('Found a token that produces no word piece')
            pieces = [p for ps in pieces for p in ps]
            piece_idxs = tokenizer.encode(pieces,
                                          add_special_tokens=True,
                                          max_length=self.max_length,
                                          truncation=True)
            attn_mask = [1] * len(piece_idxs)
            instance = {
                'sent_id': sent_id, 'token_ids': token_ids, 'tokens': tokens,
                'token_lens': token_lens, 'piece_idxs': piece_idxs,
                'attention_mask': attn_mask,
            }
            data.append(instance)
        self.data = data

    def collate_fn(self, batch):
        batch_piece_idxs = []
        batch_tokens = []
        batch_token_lens = []
        batch_attention_masks = []
        batch_sent_ids = []
        batch_token_ids = []
        batch_token_nums = []

        max_piece_num = max([len(inst['piece_idxs']) for inst in batch])
        for inst in batch:
            pad_num = max_piece_num - len(inst['piece_idxs'])
            batch_piece_idxs.append(inst['piece_idxs'] + [0] * pad_num)
            batch_attention_masks.append(inst['attention_mask'] + [0] * pad_num)
            batch_token_lens.append(inst['token_lens'])
            batch_tokens.append(inst['tokens'])
            batch_sent_ids.append(inst['sent_id'])
            batch_token_ids.append(inst['token_ids'])
            batch_token_nums.append(len(inst['tokens']))

        tensor_type = torch.cuda if self.gpu else torch
        piece_tensor = tensor_type.LongTensor(batch_piece_idxs)
        mask_tensor = tensor_type.FloatTensor(batch_attention_masks)
        token_num_tensor = tensor_type.LongTensor(batch_token_nums)

        bs = namedtuple('Batch', ['sent_ids', 'token_ids', 'tokens', 'piece_idxs',
                                  'token_lens', 'attention_masks', 'token_nums'])
        return bs(sent_ids=batch_sent_ids, token_ids=batch_token_ids,
                  tokens=batch_tokens, piece_idxs=piece_tensor,
                  token_lens=batch_token_lens,
                  attention_masks=mask_tensor,
                  token_nums=token_num_tensor)

import torch

EVENT_DICTIONARY_V1 = {"soccer-ball": 0, "soccer-ball-own": 0, "r-card": 1, "y-card": 1, "yr-card": 1,
                       "substitution-in": 2}

EVENT_DICTIONARY_V2 = {"Penalty": 0, "Kick-off": 1, "Goal": 2, "Substitution": 3, "Offside": 4, "Shots on target": 5,
                       "Shots off target": 6, "Clearance": 7, "Ball out of play": 8, "Throw-in": 9, "Foul": 10,
                       "Indirect free-kick": 11, "Direct free-kick": 12, "Corner": 13, "Yellow card": 14,
                       "Red card": 15, "Yellow->red card": 16}

INVERSE_EVENT_DICTIONARY_V2 = {v: k for k, v in EVENT_DICTIONARY_V2.items()}

# Context-aware loss parameters (in seconds), one column per class.
# K1 < K2 < 0 < K3 < K4, see the CALF paper, section 3.2.
K_V1 = torch.FloatTensor([[-20, -20, -40], [-10, -10, -20], [60, 10, 10], [90, 20, 20]])

K_V2 = torch.FloatTensor([[-100, -98, -20, -40, -96, -5, -8, -93, -99, -31, -75, -10, -97, -75, -20, -84, -18],
                          [-50, -49, -10, -20, -48, -3, -4, -46, -50, -15, -37, -5, -49, -38, -10, -42, -9],
                          [50, 49, 60, 10, 48, 3, 4, 46, 50, 15, 37, 5, 49, 38, 10, 42, 9],
                          [100, 98, 90, 20, 96, 5, 8, 93, 99, 31, 75, 10, 97, 75, 20, 84, 18]])

# Unlabelled-time default for the segmentation target when a class never occurs in a half.
UNSEEN_ACTION_DEFAULT = 1000

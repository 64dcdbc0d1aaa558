# Run inside Blender:  blender -t 64 -b render.blend -P render.py -- <result_path> <wav_name>
# Drives the 52 ARKit blendshapes of the head in render.blend with the predicted
# coefficients and renders every frame to PNG (ffmpeg muxes the audio afterwards).
import bpy
import os
import sys
import numpy as np

filename = str(sys.argv[-1])
root_dir = str(sys.argv[-2])

model_bsList = ["browDownLeft",
                "browDownRight",
                "browInnerUp",
                "browOuterUpLeft",
                "browOuterUpRight",
                "cheekPuff",
                "cheekSquintLeft",
                "cheekSquintRight",
                "eyeBlinkLeft",
                "eyeBlinkRight",
                "eyeLookDownLeft",
                "eyeLookDownRight",
                "eyeLookInLeft",
                "eyeLookInRight",
                "eyeLookOutLeft",
                "eyeLookOutRight",
                "eyeLookUpLeft",
                "eyeLookUpRight",
                "eyeSquintLeft",
                "eyeSquintRight",
                "eyeWideLeft",
                "eyeWideRight",
                "jawForward",
                "jawLeft",
                "jawOpen",
                "jawRight",
                "mouthClose",
                "mouthDimpleLeft",
                "mouthDimpleRight",
                "mouthFrownLeft",
                "mouthFrownRight",
                "mouthFunnel",
                "mouthLeft",
                "mouthLowerDownLeft",
                "mouthLowerDownRight",
                "mouthPressLeft",
                "mouthPressRight",
                "mouthPucker",
                "mouthRight",
                "mouthRollLower",
                "mouthRollUpper",
                "mouthShrugLower",
                "mouthShrugUpper",
                "mouthSmileLeft",
                "mouthSmileRight",
                "mouthStretchLeft",
                "mouthStretchRight",
                "mouthUpperUpLeft",
                "mouthUpperUpRight",
                "noseSneerLeft",
                "noseSneerRight",
                "tongueOut"]

obj = bpy.data.objects["face"]

# Cycles on the GPU; falls back to the CPU if no device is enabled
bpy.context.scene.render.engine = 'CYCLES'
bpy.context.preferences.addons['cycles'].preferences.compute_device_type = 'CUDA'
bpy.context.scene.cycles.device = 'GPU'
bpy.context.preferences.addons['cycles'].preferences.get_devices()
for d in bpy.context.preferences.addons['cycles'].preferences.devices:
    d["use"] = 1
    print(d["name"], d["use"])

bpy.context.scene.render.film_transparent = True
bpy.data.scenes['Scene'].render.fps = 30
bpy.data.scenes['Scene'].render.resolution_x = 512
bpy.data.scenes['Scene'].render.resolution_y = 768

bs = np.load(os.path.join(root_dir, '{}.npy'.format(filename)))

output_dir = os.path.join(root_dir, filename)
os.makedirs(output_dir, exist_ok=True)
for i in range(bs.shape[0]):
    curr_bs = bs[i]
    for j in range(52):
        obj.data.shape_keys.key_blocks[model_bsList[j]].value = curr_bs[j]
    bpy.context.scene.render.filepath = os.path.join(output_dir, '{}.png'.format(i))
    bpy.ops.render.render(write_still=True)

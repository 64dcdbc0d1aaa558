# Copyright (c) ByteDance Ltd. and/or its affiliates
# SPDX-License-Identifier: Apache-2.0
"""Parse UI-TARS model output ("Thought: ... Action: click(start_box='(x,y)')") into structured actions
and into pyautogui code that can be executed on the target machine."""
import re
import ast
import math

IMAGE_FACTOR = 28
MIN_PIXELS = 100 * 28 * 28
MAX_PIXELS = 16384 * 28 * 28
MAX_RATIO = 200


def round_by_factor(number: int, factor: int) -> int:
    """Returns the closest integer to 'number' that is divisible by 'factor'."""
    return round(number / factor) * factor


def ceil_by_factor(number: int, factor: int) -> int:
    """Returns the smallest integer greater than or equal to 'number' that is divisible by 'factor'."""
    return math.ceil(number / factor) * factor


def floor_by_factor(number: int, factor: int) -> int:
    """Returns the largest integer less than or equal to 'number' that is divisible by 'factor'."""
    return math.floor(number / factor) * factor


def smart_resize(height: int,
                 width: int,
                 factor: int = IMAGE_FACTOR,
                 min_pixels: int = MIN_PIXELS,
                 max_pixels: int = MAX_PIXELS) -> tuple[int, int]:
    """
    Rescales the image so that the following conditions are met:

    1. Both dimensions (height and width) are divisible by 'factor'.
    2. The total number of pixels is within the range ['min_pixels', 'max_pixels'].
    3. The aspect ratio of the image is maintained as closely as possible.
    """
    if max(height, width) / min(height, width) > MAX_RATIO:
        raise ValueError(
            f"absolute aspect ratio must be smaller than {MAX_RATIO}, got {max(height, width) / min(height, width)}"
        )
    h_bar = max(factor, round_by_factor(height, factor))
    w_bar = max(factor, round_by_factor(width, factor))
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = floor_by_factor(height / beta, factor)
        w_bar = floor_by_factor(width / beta, factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = ceil_by_factor(height * beta, factor)
        w_bar = ceil_by_factor(width * beta, factor)
    return h_bar, w_bar


def convert_point_to_coordinates(text, is_answer=False):
    # match <point>x y</point>
    pattern = r"<point>(\d+)\s+(\d+)</point>"

    def replace_match(match):
        x1, y1 = map(int, match.groups())
        x = (x1 + x1) // 2
        y = (y1 + y1) // 2
        if is_answer:
            return f"({x},{y})"
        return f"({x},{y})"

    text = re.sub(r"\[EOS\]", "", text)
    return re.sub(pattern, replace_match, text).strip()


def parse_action(action_str):
    try:
        # Parse the string into an AST node
        node = ast.parse(action_str, mode='eval')

        # Ensure the node is an expression
        if not isinstance(node, ast.Expression):
            raise ValueError("Not an expression")

        # Get the body of the expression
        call = node.body

        # Ensure the body is a function call
        if not isinstance(call, ast.Call):
            raise ValueError("Not a function call")

        # Get the function name
        if isinstance(call.func, ast.Name):
            func_name = call.func.id
        elif isinstance(call.func, ast.Attribute):
            func_name = call.func.attr
        else:
            func_name = None

        # Get the keyword arguments
        kwargs = {}
        for kw in call.keywords:
            key = kw.arg
            # Handle different types of values, assuming they are all constants here
            if isinstance(kw.value, ast.Constant):
                value = kw.value.value
            elif isinstance(kw.value, ast.Str):  # compatibility with older Python
                value = kw.value.s
            else:
                value = None
            kwargs[key] = value

        return {'function': func_name, 'args': kwargs}

    except Exception as e:
        print(f"Failed to parse action '{action_str}': {e}")
        return None


def escape_single_quotes(text):
    # match unescaped single quotes (not preceded by a backslash)
    pattern = r"(?<!\\)'"
    return re.sub(pattern, r"\\'", text)


def parse_action_to_structure_output(text,
                                     factor,
                                     origin_resized_height,
                                     origin_resized_width,
                                     model_type="qwen25vl",
                                     max_pixels=16384 * 28 * 28,
                                     min_pixels=56 * 56):
    text = text.strip()

    if "<point>" in text:
        text = convert_point_to_coordinates(text)
    if "start_point=" in text:
        text = text.replace("start_point=", "start_box=")
    if "end_point=" in text:
        text = text.replace("end_point=", "end_box=")
    if "point=" in text:
        text = text.replace("point=", "start_box=")

    if model_type == "qwen25vl":
        smart_resize_height, smart_resize_width = smart_resize(
            origin_resized_height,
            origin_resized_width,
            factor=IMAGE_FACTOR,
            min_pixels=min_pixels,
            max_pixels=max_pixels)

    # regex patterns for the different prefixes
    if text.startswith("Thought:"):
        thought_pattern = r"Thought: (.+?)(?=\s*Action: |$)"
        thought_hint = "Thought: "
    elif text.startswith("Reflection:"):
        thought_pattern = r"Reflection: (.+?)Action_Summary: (.+?)(?=\s*Action: |$)"
        thought_hint = "Reflection: "
    elif text.startswith("Action_Summary:"):
        thought_pattern = r"Action_Summary: (.+?)(?=\s*Action: |$)"
        thought_hint = "Action_Summary: "
    else:
        thought_pattern = r"Thought: (.+?)(?=\s*Action: |$)"
        thought_hint = "Thought: "
    reflection, thought = None, None
    thought_match = re.search(thought_pattern, text, re.DOTALL)
    if thought_match:
        if len(thought_match.groups()) == 1:
            thought = thought_match.group(1).strip()
        elif len(thought_match.groups()) == 2:
            thought = thought_match.group(2).strip()
            reflection = thought_match.group(1).strip()
    assert "Action:" in text
    action_str = text.split("Action: ")[-1]

    tmp_all_action = action_str.split(")\n\n")
    all_action = []
    for action_str in tmp_all_action:
        if "type(content" in action_str:
            if not action_str.strip().endswith(")"):
                action_str = action_str.strip() + ")"

            # escape the single quotes inside content='...'
            def escape_quotes(match):
                content = match.group(1)
                return content

            pattern = r"type\(content='(.*?)'\)"
            if re.search(pattern, action_str):
                content = re.sub(pattern, escape_quotes, action_str)
            else:
                raise ValueError("Pattern not found in the input string.")

            action_str = escape_single_quotes(content)
            action_str = "type(content='" + action_str + "')"
        if not action_str.strip().endswith(")"):
            action_str = action_str.strip() + ")"
        all_action.append(action_str)

    parsed_actions = [parse_action(action.replace("\n", "\\n").lstrip()) for action in all_action]
    actions = []
    for action_instance, raw_str in zip(parsed_actions, all_action):
        if action_instance is None:
            print(f"Action can't parse: {raw_str}")
            raise ValueError(f"Action can't parse: {raw_str}")
        action_type = action_instance["function"]
        params = action_instance["args"]

        action_inputs = {}
        for param_name, param in params.items():
            if param == "":
                continue
            param = param.lstrip()
            action_inputs[param_name.strip()] = param

            if "start_box" in param_name or "end_box" in param_name:
                ori_box = param
                numbers = ori_box.replace("(", "").replace(")", "").split(",")

                # qwen2.5vl outputs absolute pixel coordinates on the resized image
                if model_type == "qwen25vl":
                    float_numbers = []
                    for num_idx, num in enumerate(numbers):
                        num = float(num)
                        if (num_idx + 1) % 2 == 0:
                            float_numbers.append(float(num / smart_resize_height))
                        else:
                            float_numbers.append(float(num / smart_resize_width))
                else:
                    float_numbers = [float(num) / factor for num in numbers]

                if len(float_numbers) == 2:
                    float_numbers = [float_numbers[0], float_numbers[1], float_numbers[0], float_numbers[1]]
                action_inputs[param_name.strip()] = str(float_numbers)

        actions.append({
            "reflection": reflection,
            "thought": thought,
            "action_type": action_type,
            "action_inputs": action_inputs,
            "text": text
        })
    return actions


def parsing_response_to_pyautogui_code(responses, image_height: int, image_width: int,
                                       input_swap: bool = True) -> str:
    """Turn parsed actions into a pyautogui script (coordinates are relative 0-1 on the input)."""
    pyautogui_code = "import pyautogui\nimport time\n"
    if isinstance(responses, dict):
        responses = [responses]
    for response_id, response in enumerate(responses):
        observation = response.get("observation", "")
        thought = response.get("thought", "")
        if response_id == 0:
            pyautogui_code += f"'''\nObservation:\n{observation}\n\nThought:\n{thought}\n'''\n"
        else:
            pyautogui_code += "\ntime.sleep(1)\n"

        action_type = response.get("action_type")
        action_inputs = response.get("action_inputs", {})

        if action_type == "hotkey":
            key_param = action_inputs.get("key") or action_inputs.get("hotkey")
            if key_param and isinstance(key_param, str):
                keys = [k.strip().lower() for k in key_param.split()]
                pyautogui_code += f"\npyautogui.hotkey({', '.join(repr(k) for k in keys)})"
        elif action_type == "type":
            content = action_inputs.get("content", "")
            stripped = content.rstrip("\\n").rstrip("\n")
            if input_swap:
                pyautogui_code += "\nimport pyperclip"
                pyautogui_code += f"\npyperclip.copy({repr(stripped)})"
                pyautogui_code += "\npyautogui.hotkey('ctrl', 'v')"
                pyautogui_code += "\ntime.sleep(0.5)\n"
            else:
                pyautogui_code += f"\npyautogui.write({repr(stripped)}, interval=0.1)"
            if content.endswith("\n") or content.endswith("\\n"):
                pyautogui_code += "\npyautogui.press('enter')"
        elif action_type in ["drag", "select"]:
            start_box = eval(action_inputs.get("start_box"))
            end_box = eval(action_inputs.get("end_box"))
            sx = round(float((start_box[0] + start_box[2]) / 2) * image_width, 3)
            sy = round(float((start_box[1] + start_box[3]) / 2) * image_height, 3)
            ex = round(float((end_box[0] + end_box[2]) / 2) * image_width, 3)
            ey = round(float((end_box[1] + end_box[3]) / 2) * image_height, 3)
            pyautogui_code += (f"\npyautogui.moveTo({sx}, {sy})\n"
                               f"\npyautogui.dragTo({ex}, {ey}, duration=1.0)\n")
        elif action_type == "scroll":
            start_box = action_inputs.get("start_box")
            direction = action_inputs.get("direction", "")
            if start_box:
                box = eval(start_box)
                x = round(float((box[0] + box[2]) / 2) * image_width, 3)
                y = round(float((box[1] + box[3]) / 2) * image_height, 3)
            else:
                x = y = None
            amount = 5 if "up" in direction.lower() else -5
            if x is None:
                pyautogui_code += f"\npyautogui.scroll({amount})"
            else:
                pyautogui_code += f"\npyautogui.scroll({amount}, x={x}, y={y})"
        elif action_type in ["click", "left_single", "left_double", "right_single", "hover"]:
            start_box = action_inputs.get("start_box")
            if start_box:
                box = eval(start_box)
                x = round(float((box[0] + box[2]) / 2) * image_width, 3)
                y = round(float((box[1] + box[3]) / 2) * image_height, 3)
                if action_type in ["left_single", "click"]:
                    pyautogui_code += f"\npyautogui.click({x}, {y}, button='left')"
                elif action_type == "left_double":
                    pyautogui_code += f"\npyautogui.doubleClick({x}, {y}, button='left')"
                elif action_type == "right_single":
                    pyautogui_code += f"\npyautogui.click({x}, {y}, button='right')"
                elif action_type == "hover":
                    pyautogui_code += f"\npyautogui.moveTo({x}, {y})"
        elif action_type in ["finished"]:
            pyautogui_code = "DONE"
        else:
            pyautogui_code += f"\n# Unrecognized action type: {action_type}"

    return pyautogui_code

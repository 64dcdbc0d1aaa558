import logging
import os
import random
import time
from typing import Any, Dict, Optional

import socketio
import torch
from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse

from src.room import Member, Room
from src.simuleval_agent_directory import NoAvailableAgentException, SimulevalAgentDirectory
from src.simuleval_transcoder import SimulevalTranscoder
from src.transcoder_helpers import get_transcoder_output_events

logging.basicConfig(
    level=logging.INFO,
    format="%(asctime)s %(levelname)s %(name)s: %(message)s",
)
logger = logging.getLogger("socketio_server_pubsub")

# Refuse new sessions when the accelerator is this close to full: every
# transcoder keeps its own decoder states on the device.
MIN_FREE_DEVICE_MEM_GB = float(os.environ.get("MIN_FREE_GPU_MEM_GB", "2.0"))
MAX_SPEAKERS = int(os.environ.get("MAX_SPEAKERS", "5"))
LOCK_SERVER_COMPLETELY = os.environ.get("LOCK_SERVER_COMPLETELY", "0") == "1"

logger.info(
    "Starting server: CUDA_VISIBLE_DEVICES=%s, torch %s",
    os.environ.get("CUDA_VISIBLE_DEVICES", "<unset>"),
    torch.__version__,
)

available_agents = SimulevalAgentDirectory()
available_agents.build_available_agents()

sio = socketio.AsyncServer(
    async_mode="asgi",
    cors_allowed_origins="*",
    logger=False,
    engineio_logger=False,
)
app = FastAPI()
app.add_middleware(
    CORSMiddleware,
    allow_origins=["*"],
    allow_methods=["*"],
    allow_headers=["*"],
)
socketio_app = socketio.ASGIApp(sio, other_asgi_app=app, socketio_path="/ws/socket.io")

rooms: Dict[str, Room] = {}
session_data: Dict[str, Dict[str, Any]] = {}
server_lock: Optional[Dict[str, Any]] = None


def _device_summary() -> Dict[str, Any]:
    if not torch.cuda.is_available():
        return {"accelerator": None}
    free, total = torch.cuda.mem_get_info()
    return {
        "accelerator": torch.cuda.get_device_name(0),
        "count": torch.cuda.device_count(),
        "mem_free_gb": round(free / 2**30, 2),
        "mem_total_gb": round(total / 2**30, 2),
        "mem_allocated_gb": round(torch.cuda.memory_allocated() / 2**30, 2),
    }


def has_enough_device_memory() -> bool:
    if torch.cuda.device_count() == 0:
        return True
    free_bytes, _ = torch.cuda.mem_get_info()
    return free_bytes / 2**30 >= MIN_FREE_DEVICE_MEM_GB


def get_random_room_id() -> str:
    return "".join(random.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(4))


@app.get("/health")
async def health() -> JSONResponse:
    return JSONResponse(
        {
            "status": "ok",
            "rooms": len(rooms),
            "sessions": len(session_data),
            "agents": available_agents.get_agents_capabilities_list_for_client(),
            "device": _device_summary(),
        }
    )


@app.get("/agents")
async def agents() -> JSONResponse:
    return JSONResponse(available_agents.get_agents_capabilities_list_for_client())


@sio.on("connect")
async def connect(sid, environ):
    logger.info(f"📥 [event: connected] sid={sid}")
    session_data[sid] = {
        "member_object": None,
        "room_id": None,
        "connected_at": time.time(),
    }
    await sio.emit(
        "server_id",
        os.environ.get("SERVER_ID", "local"),
        to=sid,
    )


@sio.on("disconnect")
async def disconnect(sid):
    logger.info(f"📤 [event: disconnected] sid={sid}")
    data = session_data.pop(sid, None)
    if data is None:
        return
    member = data.get("member_object")
    room_id = data.get("room_id")
    if member is not None and member.transcoder is not None:
        member.transcoder.stop()
        member.transcoder = None
        member.requested_output_type = None
    if room_id is not None and room_id in rooms:
        rooms[room_id].remove_member(sid)
        if rooms[room_id].is_empty():
            logger.info(f"Room {room_id} is empty, deleting it")
            del rooms[room_id]


@sio.on("join_room")
async def join_room(sid, client_id, room_id_from_client, config_dict):
    room_id = room_id_from_client or get_random_room_id()
    if room_id not in rooms:
        rooms[room_id] = Room(room_id)
    room = rooms[room_id]
    roles = config_dict.get("roles", ["listener"])
    member = room.add_member(sid, client_id, roles)
    session_data[sid]["member_object"] = member
    session_data[sid]["room_id"] = room_id
    await sio.enter_room(sid, room_id)
    await emit_room_state_update(room)
    return {"roomsJoined": [room_id], "roomID": room_id}


@sio.on("configure_stream")
async def configure_stream(sid, config):
    data = session_data.get(sid)
    if data is None or data["member_object"] is None:
        return {"status": "error", "message": "member_not_found"}
    member: Member = data["member_object"]

    if LOCK_SERVER_COMPLETELY:
        return {"status": "error", "message": "server_locked"}

    speakers = [m for r in rooms.values() for m in r.members.values() if m.transcoder]
    if len(speakers) >= MAX_SPEAKERS:
        return {"status": "error", "message": "too_many_speakers"}

    if not has_enough_device_memory():
        logger.warning("Refusing new stream, device memory is low: %s", _device_summary())
        return {"status": "error", "message": "server_busy"}

    model_name = config.get("model_name")
    model_type = config.get("model_type")
    is_debug = config.get("debug", False)
    buffer_limit = float(config.get("buffer_limit", 1.0))
    try:
        agent = available_agents.get_agent_or_throw(model_name)
    except NoAvailableAgentException as e:
        logger.warning(f"Error while getting agent: {e}")
        return {"status": "error", "message": str(e)}

    if member.transcoder is not None:
        member.transcoder.stop()
    member.transcoder = SimulevalTranscoder(
        agent,
        config["rate"],
        debug=is_debug,
        buffer_limit=buffer_limit,
    )
    member.transcoder.start()
    member.requested_output_type = model_type
    logger.info(f"Transcoder configured for {sid}: {model_name} ({model_type})")
    return {"status": "ok", "message": "server_ready"}


@sio.on("incoming_audio")
async def incoming_audio(sid, blob, dynamic_config):
    data = session_data.get(sid)
    if data is None:
        return
    member: Optional[Member] = data["member_object"]
    if member is None or member.transcoder is None:
        return
    member.transcoder.process_incoming_bytes(blob, dynamic_config=dynamic_config)
    events = get_transcoder_output_events(member.transcoder)
    room_id = data["room_id"]
    for e in events:
        await sio.emit("translation_speech" if e["event"] == "speech" else "translation_text", e, room=room_id)


@sio.on("stop_stream")
async def stop_stream(sid):
    data = session_data.get(sid)
    if data is None or data["member_object"] is None:
        return {"status": "error"}
    member = data["member_object"]
    if member.transcoder is not None:
        member.transcoder.stop()
        member.transcoder = None
    # Transcoder states hold large tensors; give the memory back eagerly.
    torch.cuda.empty_cache()
    return {"status": "ok"}


async def emit_room_state_update(room: Room) -> None:
    await sio.emit(
        "room_state_update",
        room.to_json(),
        room=room.room_id,
    )


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(socketio_app, host="0.0.0.0", port=int(os.environ.get("PORT", "7860")))

"""Wire shapes of the fake batch APIs (:mod:`quiztui.testing.fake_batches`): result lines, error
bodies, list pages and the multipart upload, as OpenAI Batch and Anthropic Message Batches send
and take them. Plain functions of their arguments; the state lives in ``FakeBatches``.
"""

from __future__ import annotations

import json
import re
from typing import Any

EXPIRED = "expired"
_EXPIRED_MESSAGE = "This request could not be executed before the completion window expired."
JSON = "application/json"
JSONL = "application/jsonl"

Response = tuple[int, bytes, str]  # status, body, content type


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def openai_line(
    cid: str, model: str, reply: str, usage: tuple[int, int], failure: str | None
) -> dict[str, Any]:
    line: dict[str, Any] = {"id": f"batch_req_{cid}", "custom_id": cid, "error": None}
    if failure == EXPIRED:
        line["response"] = None
        line["error"] = {"code": "batch_expired", "message": _EXPIRED_MESSAGE}
    elif failure is not None:
        error = {"message": failure, "type": "invalid_request_error", "param": None, "code": None}
        line["response"] = {
            "status_code": 400,
            "request_id": f"req_{cid}",
            "body": {"error": error},
        }
    else:
        completion = {
            "id": f"chatcmpl-{cid}",
            "object": "chat.completion",
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": usage[0],
                "completion_tokens": usage[1],
                "total_tokens": sum(usage),
            },
        }
        line["response"] = {"status_code": 200, "request_id": f"req_{cid}", "body": completion}
    return line


def anthropic_line(
    cid: str, model: str, reply: str, usage: tuple[int, int], failure: str | None
) -> dict[str, Any]:
    if failure == EXPIRED:
        return {"custom_id": cid, "result": {"type": "expired"}}
    if failure is not None:
        error = {"type": "error", "error": {"type": "invalid_request_error", "message": failure}}
        return {"custom_id": cid, "result": {"type": "errored", "error": error}}
    message = {
        "id": f"msg_{cid}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": reply}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }
    return {"custom_id": cid, "result": {"type": "succeeded", "message": message}}


def approx_tokens(text: str) -> int:
    return -(-len(text) // 4)  # the chat endpoint's approximation: ceil(len / 4)


def multipart(body: bytes) -> dict[str, tuple[str | None, bytes]]:
    """The named parts of a multipart/form-data body (the boundary is its first line), each with
    its ``filename`` when it has one."""
    first, _, _ = body.partition(b"\r\n")
    if not first.startswith(b"--"):
        return {}
    out = {}
    for part in body.split(first)[1:]:
        head, sep, data = part.partition(b"\r\n\r\n")
        name = re.search(rb'\bname="([^"]*)"', head)
        filename = re.search(rb'\bfilename="([^"]*)"', head)
        if sep and name:
            label = filename.group(1).decode() if filename else None
            out[name.group(1).decode()] = (label, data.removesuffix(b"\r\n"))
    return out


def json_object(body: bytes) -> dict[str, Any]:
    """The JSON object of a request body ({} for anything else)."""
    try:
        data = json.loads(body)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def list_page(items: list[dict[str, Any]], query: dict[str, str], cursor: str) -> dict[str, Any]:
    """One page of a list endpoint over ``items`` (already in the endpoint's order): ``limit``
    (default 20) items after the one the ``cursor`` parameter names."""
    try:
        limit = max(1, int(query.get("limit", "20")))
    except ValueError:
        limit = 20
    ids = [item["id"] for item in items]
    after = query.get(cursor)
    start = ids.index(after) + 1 if after in ids else 0
    page = items[start : start + limit]
    return {
        "data": page,
        "first_id": page[0]["id"] if page else None,
        "last_id": page[-1]["id"] if page else None,
        "has_more": start + limit < len(items),
    }


def valid_metadata(metadata: Any) -> bool:
    """OpenAI's rule: at most 16 pairs, string keys up to 64 and string values up to 512 chars."""
    if metadata is None:
        return True
    if not isinstance(metadata, dict) or len(metadata) > 16:
        return False
    return all(
        isinstance(k, str) and isinstance(v, str) and len(k) <= 64 and len(v) <= 512
        for k, v in metadata.items()
    )


def dump(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def openai_error(status: int, message: str) -> Response:
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    return status, dump({"error": error}), JSON


def anthropic_error(status: int, kind: str, message: str) -> Response:
    return status, dump({"type": "error", "error": {"type": kind, "message": message}}), JSON

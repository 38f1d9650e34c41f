"""Building the grpc.aio server: registration of SessionService with request decoding."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from claw_sessiond_client.api.v1 import sessiond_pb2 as pb

from ..errors import InvalidRequestError, Reason
from .edge import Context, abort
from .service import SessionService

__all__ = ["add_to_server"]


def _decoder(cls: Any) -> Callable[[bytes], Any]:
    name = cls.DESCRIPTOR.full_name

    def decode(raw: bytes) -> Any:
        try:
            return cls.FromString(raw)
        except DecodeError as exc:
            raise InvalidRequestError(
                f"the request is not a valid {name}: {exc} (a string field holds invalid UTF-8, "
                "or the bytes are not this message)",
                reason=Reason.INVALID_MESSAGE,
            ) from exc

    return decode


def _handler(service: SessionService, method: Any) -> grpc.RpcMethodHandler[Any, Any]:
    """One RPC whose request bytes are decoded inside the handler, not by grpcio.

    A request that grpcio's own deserializer cannot decode (invalid UTF-8 in a
    string field, truncated or garbage bytes) ends as UNKNOWN "Unexpected
    DecodeError", before any servicer code runs. Decoding here instead lets the
    error edge refuse it as INVALID_ARGUMENT (reason INVALID_MESSAGE), counted
    in the metrics like any other refusal.
    """
    name = method.name
    decode = _decoder(getattr(pb, method.input_type.name))
    serialize = getattr(pb, method.output_type.name).SerializeToString
    servicer_method = getattr(service, name)

    async def decoded(raw: bytes, context: Context) -> Any:
        try:
            return decode(raw)
        except InvalidRequestError as exc:
            service.observe_rpc(name, grpc.StatusCode.INVALID_ARGUMENT.name, 0.0)
            await abort(context, exc, name)
            raise  # unreachable: abort raises

    if method.client_streaming and method.server_streaming:

        async def stream_stream(raws: AsyncIterator[bytes], context: Context) -> Any:
            async def requests() -> AsyncIterator[Any]:
                async for raw in raws:
                    yield decode(raw)  # an InvalidRequestError ends the stream through the servicer's edge

            async with contextlib.aclosing(servicer_method(requests(), context)) as replies:
                async for reply in replies:
                    yield reply

        return grpc.stream_stream_rpc_method_handler(stream_stream, response_serializer=serialize)
    if method.server_streaming:

        async def unary_stream(raw: bytes, context: Context) -> Any:
            request = await decoded(raw, context)
            async with contextlib.aclosing(servicer_method(request, context)) as replies:
                async for reply in replies:
                    yield reply

        return grpc.unary_stream_rpc_method_handler(unary_stream, response_serializer=serialize)
    if method.client_streaming:
        raise NotImplementedError(f"{name}: client-streaming RPCs are not wired here")

    async def unary_unary(raw: bytes, context: Context) -> Any:
        return await servicer_method(await decoded(raw, context), context)

    return grpc.unary_unary_rpc_method_handler(unary_unary, response_serializer=serialize)


def add_to_server(service: SessionService, server: grpc.aio.Server) -> None:
    """Register every RPC of SessionService (in place of the generated ``add_…_to_server``).

    Same methods and serializers as the generated code, but requests arrive
    as bytes and are decoded by :func:`_handler`, so undecodable requests get
    INVALID_ARGUMENT instead of grpcio's UNKNOWN.
    """
    descriptor = pb.DESCRIPTOR.services_by_name["SessionService"]
    handlers = {m.name: _handler(service, m) for m in descriptor.methods}
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(descriptor.full_name, handlers),))

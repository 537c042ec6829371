// The APNs vocabulary (device tokens, environments, provider keys) is part of this library's API.
@_exported import PushCore

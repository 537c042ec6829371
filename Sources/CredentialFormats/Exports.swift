// The APNs vocabulary (provider keys, environments, secret bytes) is part of this library's API.
@_exported import PushCore

// The APNs vocabulary (notifications, responses, reasons) is part of this library's API.
@_exported import PushCore

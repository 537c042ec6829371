import Foundation
import TestSupport
import Testing

/// The shared paths, under the name this target's tests use.
typealias Paths = TestPaths

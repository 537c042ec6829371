import SwiftASN1

extension ASN1ObjectIdentifier {
    /// Apple's certificate extensions that matter for push (see Apple's WWDR certificate policy).
    public enum ApplePushExtensionID {
        /// Present (value ASN.1 NULL) on certificates that may use the sandbox (development) gateway.
        public static let development: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 3, 1]
        /// Present (value ASN.1 NULL) on certificates that may use the production gateway.
        public static let production: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 3, 2]
        /// Marks a VoIP Services certificate.
        public static let voipServices: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 3, 4]
        /// Marks a WatchKit Services certificate.
        public static let watchKitServices: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 3, 5]
        /// The topics the certificate may push to, with their kinds.
        public static let topics: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 3, 6]
    }

    /// Distinguished-name attributes push certificates use that swift-certificates does not name.
    public enum PushNameAttribute {
        /// `UID` (userId, RFC 4519): the bundle ID, which is the certificate's default topic.
        public static let userID: ASN1ObjectIdentifier = [0, 9, 2342, 19_200_300, 100, 1, 1]
    }
}

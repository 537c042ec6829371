import PushCore

extension CredentialError {
    /// What went wrong, one of a closed set (a private enum behind static constants, as
    /// swift-certificates names its codes): compare with the constants (`error.code == .wrongPassword`)
    /// or switch on them; a new code is a new constant, never a new case that breaks a switch.
    /// Each is one of ``ErrorCode``'s, the string JSON reports give (``errorCode``).
    public struct Code: ClosedErrorCode {
        private enum Backing: Hashable, Sendable, CaseIterable {
            case fileNotFound, isDirectory, unreadable, emptyFile, excessiveWork, fileTooLarge
            case notACertificate, corrupt, truncated, noCertificate, passwordRequired, wrongPassword
            case unknownEncryption, legacyProviderUnavailable, noPrivateKey, keyMismatch, unsupportedKey
            case invalidArgument, secretStoreUnavailable, secretStoreLocked, secretNotFound, storeError
            case aliasNotFound, alreadyImported, aliasTaken, teamIDRequired, keyIDRequired, invalidAlias
            case notAStore, indexMissing, indexUnreadable, entryOutsideStore, fileExists, expiresSooner
            case narrowerCoverage, outsideValidity, notATokenKey, noMatchingRequest, sameAppStored
            case notAPushCertificate, notExportable, tampered, teamError, notAMember, teamConflict
            case untrustedMembers, historyRewritten, noSigningKey, notARegularFile, notCheckedOut
            case unsafeStoreFolder, invalidTeamID, invalidKeyID, writeFailed
        }

        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// `file_not_found` (``ErrorCode/fileNotFound``).
        public static let fileNotFound = Code(.fileNotFound)
        /// `is_directory` (``ErrorCode/isDirectory``).
        public static let isDirectory = Code(.isDirectory)
        /// `unreadable` (``ErrorCode/unreadable``).
        public static let unreadable = Code(.unreadable)
        /// `empty_file` (``ErrorCode/emptyFile``).
        public static let emptyFile = Code(.emptyFile)
        /// `excessive_iterations` (``ErrorCode/excessiveWork``).
        public static let excessiveWork = Code(.excessiveWork)
        /// `file_too_large` (``ErrorCode/fileTooLarge``).
        public static let fileTooLarge = Code(.fileTooLarge)
        /// `not_a_certificate` (``ErrorCode/notACertificate``).
        public static let notACertificate = Code(.notACertificate)
        /// `corrupt` (``ErrorCode/corrupt``).
        public static let corrupt = Code(.corrupt)
        /// `truncated` (``ErrorCode/truncated``).
        public static let truncated = Code(.truncated)
        /// `no_certificate` (``ErrorCode/noCertificate``).
        public static let noCertificate = Code(.noCertificate)
        /// `password_required` (``ErrorCode/passwordRequired``).
        public static let passwordRequired = Code(.passwordRequired)
        /// `wrong_password` (``ErrorCode/wrongPassword``).
        public static let wrongPassword = Code(.wrongPassword)
        /// `unknown_encryption` (``ErrorCode/unknownEncryption``).
        public static let unknownEncryption = Code(.unknownEncryption)
        /// `legacy_provider_unavailable` (``ErrorCode/legacyProviderUnavailable``).
        public static let legacyProviderUnavailable = Code(.legacyProviderUnavailable)
        /// `no_private_key` (``ErrorCode/noPrivateKey``).
        public static let noPrivateKey = Code(.noPrivateKey)
        /// `key_mismatch` (``ErrorCode/keyMismatch``).
        public static let keyMismatch = Code(.keyMismatch)
        /// `unsupported_key` (``ErrorCode/unsupportedKey``).
        public static let unsupportedKey = Code(.unsupportedKey)
        /// `invalid_argument` (``ErrorCode/invalidArgument``).
        public static let invalidArgument = Code(.invalidArgument)
        /// `secret_store_unavailable` (``ErrorCode/secretStoreUnavailable``).
        public static let secretStoreUnavailable = Code(.secretStoreUnavailable)
        /// `secret_store_locked` (``ErrorCode/secretStoreLocked``).
        public static let secretStoreLocked = Code(.secretStoreLocked)
        /// `secret_not_found` (``ErrorCode/secretNotFound``).
        public static let secretNotFound = Code(.secretNotFound)
        /// `store_error` (``ErrorCode/storeError``).
        public static let storeError = Code(.storeError)
        /// `alias_not_found` (``ErrorCode/aliasNotFound``).
        public static let aliasNotFound = Code(.aliasNotFound)
        /// `already_imported` (``ErrorCode/alreadyImported``).
        public static let alreadyImported = Code(.alreadyImported)
        /// `alias_taken` (``ErrorCode/aliasTaken``).
        public static let aliasTaken = Code(.aliasTaken)
        /// `team_id_required` (``ErrorCode/teamIDRequired``).
        public static let teamIDRequired = Code(.teamIDRequired)
        /// `key_id_required` (``ErrorCode/keyIDRequired``).
        public static let keyIDRequired = Code(.keyIDRequired)
        /// `invalid_alias` (``ErrorCode/invalidAlias``).
        public static let invalidAlias = Code(.invalidAlias)
        /// `not_a_store` (``ErrorCode/notAStore``).
        public static let notAStore = Code(.notAStore)
        /// `index_missing` (``ErrorCode/indexMissing``).
        public static let indexMissing = Code(.indexMissing)
        /// `index_unreadable` (``ErrorCode/indexUnreadable``).
        public static let indexUnreadable = Code(.indexUnreadable)
        /// `entry_outside_store` (``ErrorCode/entryOutsideStore``).
        public static let entryOutsideStore = Code(.entryOutsideStore)
        /// `file_exists` (``ErrorCode/fileExists``).
        public static let fileExists = Code(.fileExists)
        /// `expires_sooner` (``ErrorCode/expiresSooner``).
        public static let expiresSooner = Code(.expiresSooner)
        /// `narrower_coverage` (``ErrorCode/narrowerCoverage``).
        public static let narrowerCoverage = Code(.narrowerCoverage)
        /// `outside_validity` (``ErrorCode/outsideValidity``).
        public static let outsideValidity = Code(.outsideValidity)
        /// `not_a_token_key` (``ErrorCode/notATokenKey``).
        public static let notATokenKey = Code(.notATokenKey)
        /// `no_matching_request` (``ErrorCode/noMatchingRequest``).
        public static let noMatchingRequest = Code(.noMatchingRequest)
        /// `same_app_stored` (``ErrorCode/sameAppStored``).
        public static let sameAppStored = Code(.sameAppStored)
        /// `not_a_push_certificate` (``ErrorCode/notAPushCertificate``).
        public static let notAPushCertificate = Code(.notAPushCertificate)
        /// `not_exportable` (``ErrorCode/notExportable``).
        public static let notExportable = Code(.notExportable)
        /// `tampered` (``ErrorCode/tampered``).
        public static let tampered = Code(.tampered)
        /// `team_error` (``ErrorCode/teamError``).
        public static let teamError = Code(.teamError)
        /// `not_a_member` (``ErrorCode/notAMember``).
        public static let notAMember = Code(.notAMember)
        /// `team_conflict` (``ErrorCode/teamConflict``).
        public static let teamConflict = Code(.teamConflict)
        /// `untrusted_members` (``ErrorCode/untrustedMembers``).
        public static let untrustedMembers = Code(.untrustedMembers)
        /// `history_rewritten` (``ErrorCode/historyRewritten``).
        public static let historyRewritten = Code(.historyRewritten)
        /// `no_signing_key` (``ErrorCode/noSigningKey``).
        public static let noSigningKey = Code(.noSigningKey)
        /// `not_a_regular_file` (``ErrorCode/notARegularFile``).
        public static let notARegularFile = Code(.notARegularFile)
        /// `not_checked_out` (``ErrorCode/notCheckedOut``).
        public static let notCheckedOut = Code(.notCheckedOut)
        /// `unsafe_store_folder` (``ErrorCode/unsafeStoreFolder``).
        public static let unsafeStoreFolder = Code(.unsafeStoreFolder)
        /// `invalid_team_id` (``ErrorCode/invalidTeamID``).
        public static let invalidTeamID = Code(.invalidTeamID)
        /// `invalid_key_id` (``ErrorCode/invalidKeyID``).
        public static let invalidKeyID = Code(.invalidKeyID)
        /// `write_failed` (``ErrorCode/writeFailed``).
        public static let writeFailed = Code(.writeFailed)
        /// ``fileTooLarge`` by the name it was first given.
        public static var tooLarge: Code { .fileTooLarge }

        /// Every code of this error.
        public static var all: [Code] { Backing.allCases.map(Code.init) }

        /// The code as JSON reports give it, one of ``ErrorCode``'s static members.
        public var errorCode: ErrorCode {
            switch backing {
            case .fileNotFound: return .fileNotFound
            case .isDirectory: return .isDirectory
            case .unreadable: return .unreadable
            case .emptyFile: return .emptyFile
            case .excessiveWork: return .excessiveWork
            case .fileTooLarge: return .fileTooLarge
            case .notACertificate: return .notACertificate
            case .corrupt: return .corrupt
            case .truncated: return .truncated
            case .noCertificate: return .noCertificate
            case .passwordRequired: return .passwordRequired
            case .wrongPassword: return .wrongPassword
            case .unknownEncryption: return .unknownEncryption
            case .legacyProviderUnavailable: return .legacyProviderUnavailable
            case .noPrivateKey: return .noPrivateKey
            case .keyMismatch: return .keyMismatch
            case .unsupportedKey: return .unsupportedKey
            case .invalidArgument: return .invalidArgument
            case .secretStoreUnavailable: return .secretStoreUnavailable
            case .secretStoreLocked: return .secretStoreLocked
            case .secretNotFound: return .secretNotFound
            case .storeError: return .storeError
            case .aliasNotFound: return .aliasNotFound
            case .alreadyImported: return .alreadyImported
            case .aliasTaken: return .aliasTaken
            case .teamIDRequired: return .teamIDRequired
            case .keyIDRequired: return .keyIDRequired
            case .invalidAlias: return .invalidAlias
            case .notAStore: return .notAStore
            case .indexMissing: return .indexMissing
            case .indexUnreadable: return .indexUnreadable
            case .entryOutsideStore: return .entryOutsideStore
            case .fileExists: return .fileExists
            case .expiresSooner: return .expiresSooner
            case .narrowerCoverage: return .narrowerCoverage
            case .outsideValidity: return .outsideValidity
            case .notATokenKey: return .notATokenKey
            case .noMatchingRequest: return .noMatchingRequest
            case .sameAppStored: return .sameAppStored
            case .notAPushCertificate: return .notAPushCertificate
            case .notExportable: return .notExportable
            case .tampered: return .tampered
            case .teamError: return .teamError
            case .notAMember: return .notAMember
            case .teamConflict: return .teamConflict
            case .untrustedMembers: return .untrustedMembers
            case .historyRewritten: return .historyRewritten
            case .noSigningKey: return .noSigningKey
            case .notARegularFile: return .notARegularFile
            case .notCheckedOut: return .notCheckedOut
            case .unsafeStoreFolder: return .unsafeStoreFolder
            case .invalidTeamID: return .invalidTeamID
            case .invalidKeyID: return .invalidKeyID
            case .writeFailed: return .writeFailed
            }
        }

    }
}

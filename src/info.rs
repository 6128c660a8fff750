//! `SQLGetInfo` answers and connection attributes, in the engine's terms.
//!
//! How each `SQLGetInfo` type answers (ODBC reference, "SQLGetInfo": the information types
//! and their return types), so `getinfo` reads the right width and gives str, bool or int.

/// The C type `SQLGetInfo` writes for one information type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InfoKind {
    /// A character string.
    Text,
    /// A "Y"/"N" character string, given as a bool.
    YesNo,
    /// An SQLUINTEGER (bitmasks, counts).
    U32,
    /// An SQLUSMALLINT.
    U16,
}

/// One `SQLGetInfo` answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InfoValue {
    Text(String),
    Bool(bool),
    U32(u32),
    U16(u16),
}

/// A connection attribute value for `SQLSetConnectAttr`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttrValue {
    /// Passed by value in the pointer argument (SQLULEN-sized).
    Int(usize),
    /// Passed as a wide string with its byte length.
    Text(String),
    /// Passed as a binary buffer (`SQL_IS_POINTER`-style attributes take bytes).
    Bytes(Vec<u8>),
}

/// The kind of `info_type`; `None` for a type this table does not know.
pub fn info_kind(info_type: u16) -> Option<InfoKind> {
    INFO_KINDS
        .binary_search_by_key(&info_type, |&(code, _, _)| code)
        .ok()
        .map(|i| INFO_KINDS[i].2)
}

/// (code, name, kind), sorted by code.
const INFO_KINDS: &[(u16, &str, InfoKind)] = &[
    (0, "SQL_MAX_DRIVER_CONNECTIONS", InfoKind::U16),
    (1, "SQL_MAX_CONCURRENT_ACTIVITIES", InfoKind::U16),
    (2, "SQL_DATA_SOURCE_NAME", InfoKind::Text),
    (6, "SQL_DRIVER_NAME", InfoKind::Text),
    (7, "SQL_DRIVER_VER", InfoKind::Text),
    (10, "SQL_ODBC_VER", InfoKind::Text),
    (11, "SQL_ROW_UPDATES", InfoKind::YesNo),
    (13, "SQL_SERVER_NAME", InfoKind::Text),
    (14, "SQL_SEARCH_PATTERN_ESCAPE", InfoKind::Text),
    (16, "SQL_DATABASE_NAME", InfoKind::Text),
    (17, "SQL_DBMS_NAME", InfoKind::Text),
    (18, "SQL_DBMS_VER", InfoKind::Text),
    (19, "SQL_ACCESSIBLE_TABLES", InfoKind::YesNo),
    (20, "SQL_ACCESSIBLE_PROCEDURES", InfoKind::YesNo),
    (21, "SQL_PROCEDURES", InfoKind::YesNo),
    (22, "SQL_CONCAT_NULL_BEHAVIOR", InfoKind::U16),
    (23, "SQL_CURSOR_COMMIT_BEHAVIOR", InfoKind::U16),
    (24, "SQL_CURSOR_ROLLBACK_BEHAVIOR", InfoKind::U16),
    (25, "SQL_DATA_SOURCE_READ_ONLY", InfoKind::YesNo),
    (26, "SQL_DEFAULT_TXN_ISOLATION", InfoKind::U32),
    (27, "SQL_EXPRESSIONS_IN_ORDERBY", InfoKind::YesNo),
    (28, "SQL_IDENTIFIER_CASE", InfoKind::U16),
    (29, "SQL_IDENTIFIER_QUOTE_CHAR", InfoKind::Text),
    (30, "SQL_MAX_COLUMN_NAME_LEN", InfoKind::U16),
    (31, "SQL_MAX_CURSOR_NAME_LEN", InfoKind::U16),
    (32, "SQL_MAX_SCHEMA_NAME_LEN", InfoKind::U16),
    (33, "SQL_MAX_PROCEDURE_NAME_LEN", InfoKind::U16),
    (34, "SQL_MAX_CATALOG_NAME_LEN", InfoKind::U16),
    (35, "SQL_MAX_TABLE_NAME_LEN", InfoKind::U16),
    (36, "SQL_MULT_RESULT_SETS", InfoKind::YesNo),
    (37, "SQL_MULTIPLE_ACTIVE_TXN", InfoKind::YesNo),
    (39, "SQL_SCHEMA_TERM", InfoKind::Text),
    (40, "SQL_PROCEDURE_TERM", InfoKind::Text),
    (41, "SQL_CATALOG_NAME_SEPARATOR", InfoKind::Text),
    (42, "SQL_CATALOG_TERM", InfoKind::Text),
    (44, "SQL_SCROLL_OPTIONS", InfoKind::U32),
    (45, "SQL_TABLE_TERM", InfoKind::Text),
    (46, "SQL_TXN_CAPABLE", InfoKind::U16),
    (47, "SQL_USER_NAME", InfoKind::Text),
    (48, "SQL_CONVERT_FUNCTIONS", InfoKind::U32),
    (49, "SQL_NUMERIC_FUNCTIONS", InfoKind::U32),
    (50, "SQL_STRING_FUNCTIONS", InfoKind::U32),
    (51, "SQL_SYSTEM_FUNCTIONS", InfoKind::U32),
    (52, "SQL_TIMEDATE_FUNCTIONS", InfoKind::U32),
    (53, "SQL_CONVERT_BIGINT", InfoKind::U32),
    (54, "SQL_CONVERT_BINARY", InfoKind::U32),
    (55, "SQL_CONVERT_BIT", InfoKind::U32),
    (56, "SQL_CONVERT_CHAR", InfoKind::U32),
    (57, "SQL_CONVERT_DATE", InfoKind::U32),
    (58, "SQL_CONVERT_DECIMAL", InfoKind::U32),
    (59, "SQL_CONVERT_DOUBLE", InfoKind::U32),
    (60, "SQL_CONVERT_FLOAT", InfoKind::U32),
    (61, "SQL_CONVERT_INTEGER", InfoKind::U32),
    (62, "SQL_CONVERT_LONGVARCHAR", InfoKind::U32),
    (63, "SQL_CONVERT_NUMERIC", InfoKind::U32),
    (64, "SQL_CONVERT_REAL", InfoKind::U32),
    (65, "SQL_CONVERT_SMALLINT", InfoKind::U32),
    (66, "SQL_CONVERT_TIME", InfoKind::U32),
    (67, "SQL_CONVERT_TIMESTAMP", InfoKind::U32),
    (68, "SQL_CONVERT_TINYINT", InfoKind::U32),
    (69, "SQL_CONVERT_VARBINARY", InfoKind::U32),
    (70, "SQL_CONVERT_VARCHAR", InfoKind::U32),
    (71, "SQL_CONVERT_LONGVARBINARY", InfoKind::U32),
    (72, "SQL_TXN_ISOLATION_OPTION", InfoKind::U32),
    (73, "SQL_INTEGRITY", InfoKind::YesNo),
    (74, "SQL_CORRELATION_NAME", InfoKind::U16),
    (75, "SQL_NON_NULLABLE_COLUMNS", InfoKind::U16),
    (77, "SQL_DRIVER_ODBC_VER", InfoKind::Text),
    (81, "SQL_GETDATA_EXTENSIONS", InfoKind::U32),
    (82, "SQL_BOOKMARK_PERSISTENCE", InfoKind::U32),
    (84, "SQL_FILE_USAGE", InfoKind::U16),
    (85, "SQL_NULL_COLLATION", InfoKind::U16),
    (86, "SQL_ALTER_TABLE", InfoKind::U32),
    (87, "SQL_COLUMN_ALIAS", InfoKind::YesNo),
    (88, "SQL_GROUP_BY", InfoKind::U16),
    (89, "SQL_KEYWORDS", InfoKind::Text),
    (90, "SQL_ORDER_BY_COLUMNS_IN_SELECT", InfoKind::YesNo),
    (91, "SQL_SCHEMA_USAGE", InfoKind::U32),
    (92, "SQL_CATALOG_USAGE", InfoKind::U32),
    (93, "SQL_QUOTED_IDENTIFIER_CASE", InfoKind::U16),
    (94, "SQL_SPECIAL_CHARACTERS", InfoKind::Text),
    (95, "SQL_SUBQUERIES", InfoKind::U32),
    (96, "SQL_UNION", InfoKind::U32),
    (97, "SQL_MAX_COLUMNS_IN_GROUP_BY", InfoKind::U16),
    (98, "SQL_MAX_COLUMNS_IN_INDEX", InfoKind::U16),
    (99, "SQL_MAX_COLUMNS_IN_ORDER_BY", InfoKind::U16),
    (100, "SQL_MAX_COLUMNS_IN_SELECT", InfoKind::U16),
    (101, "SQL_MAX_COLUMNS_IN_TABLE", InfoKind::U16),
    (102, "SQL_MAX_INDEX_SIZE", InfoKind::U32),
    (103, "SQL_MAX_ROW_SIZE_INCLUDES_LONG", InfoKind::YesNo),
    (104, "SQL_MAX_ROW_SIZE", InfoKind::U32),
    (105, "SQL_MAX_STATEMENT_LEN", InfoKind::U32),
    (106, "SQL_MAX_TABLES_IN_SELECT", InfoKind::U16),
    (107, "SQL_MAX_USER_NAME_LEN", InfoKind::U16),
    (108, "SQL_MAX_CHAR_LITERAL_LEN", InfoKind::U32),
    (109, "SQL_TIMEDATE_ADD_INTERVALS", InfoKind::U32),
    (110, "SQL_TIMEDATE_DIFF_INTERVALS", InfoKind::U32),
    (111, "SQL_NEED_LONG_DATA_LEN", InfoKind::YesNo),
    (112, "SQL_MAX_BINARY_LITERAL_LEN", InfoKind::U32),
    (113, "SQL_LIKE_ESCAPE_CLAUSE", InfoKind::YesNo),
    (114, "SQL_CATALOG_LOCATION", InfoKind::U16),
    (115, "SQL_OJ_CAPABILITIES", InfoKind::U32),
    (116, "SQL_ACTIVE_ENVIRONMENTS", InfoKind::U16),
    (117, "SQL_ALTER_DOMAIN", InfoKind::U32),
    (118, "SQL_SQL_CONFORMANCE", InfoKind::U32),
    (119, "SQL_DATETIME_LITERALS", InfoKind::U32),
    (120, "SQL_BATCH_ROW_COUNT", InfoKind::U32),
    (121, "SQL_BATCH_SUPPORT", InfoKind::U32),
    (122, "SQL_CONVERT_WCHAR", InfoKind::U32),
    (123, "SQL_CONVERT_INTERVAL_DAY_TIME", InfoKind::U32),
    (124, "SQL_CONVERT_INTERVAL_YEAR_MONTH", InfoKind::U32),
    (125, "SQL_CONVERT_WLONGVARCHAR", InfoKind::U32),
    (126, "SQL_CONVERT_WVARCHAR", InfoKind::U32),
    (127, "SQL_CREATE_ASSERTION", InfoKind::U32),
    (128, "SQL_CREATE_CHARACTER_SET", InfoKind::U32),
    (129, "SQL_CREATE_COLLATION", InfoKind::U32),
    (130, "SQL_CREATE_DOMAIN", InfoKind::U32),
    (131, "SQL_CREATE_SCHEMA", InfoKind::U32),
    (132, "SQL_CREATE_TABLE", InfoKind::U32),
    (133, "SQL_CREATE_TRANSLATION", InfoKind::U32),
    (134, "SQL_CREATE_VIEW", InfoKind::U32),
    (136, "SQL_DROP_ASSERTION", InfoKind::U32),
    (137, "SQL_DROP_CHARACTER_SET", InfoKind::U32),
    (138, "SQL_DROP_COLLATION", InfoKind::U32),
    (139, "SQL_DROP_DOMAIN", InfoKind::U32),
    (140, "SQL_DROP_SCHEMA", InfoKind::U32),
    (141, "SQL_DROP_TABLE", InfoKind::U32),
    (142, "SQL_DROP_TRANSLATION", InfoKind::U32),
    (143, "SQL_DROP_VIEW", InfoKind::U32),
    (144, "SQL_DYNAMIC_CURSOR_ATTRIBUTES1", InfoKind::U32),
    (145, "SQL_DYNAMIC_CURSOR_ATTRIBUTES2", InfoKind::U32),
    (146, "SQL_FORWARD_ONLY_CURSOR_ATTRIBUTES1", InfoKind::U32),
    (147, "SQL_FORWARD_ONLY_CURSOR_ATTRIBUTES2", InfoKind::U32),
    (148, "SQL_INDEX_KEYWORDS", InfoKind::U32),
    (149, "SQL_INFO_SCHEMA_VIEWS", InfoKind::U32),
    (150, "SQL_KEYSET_CURSOR_ATTRIBUTES1", InfoKind::U32),
    (151, "SQL_KEYSET_CURSOR_ATTRIBUTES2", InfoKind::U32),
    (152, "SQL_ODBC_INTERFACE_CONFORMANCE", InfoKind::U32),
    (153, "SQL_PARAM_ARRAY_ROW_COUNTS", InfoKind::U32),
    (154, "SQL_PARAM_ARRAY_SELECTS", InfoKind::U32),
    (155, "SQL_SQL92_DATETIME_FUNCTIONS", InfoKind::U32),
    (156, "SQL_SQL92_FOREIGN_KEY_DELETE_RULE", InfoKind::U32),
    (157, "SQL_SQL92_FOREIGN_KEY_UPDATE_RULE", InfoKind::U32),
    (158, "SQL_SQL92_GRANT", InfoKind::U32),
    (159, "SQL_SQL92_NUMERIC_VALUE_FUNCTIONS", InfoKind::U32),
    (160, "SQL_SQL92_PREDICATES", InfoKind::U32),
    (161, "SQL_SQL92_RELATIONAL_JOIN_OPERATORS", InfoKind::U32),
    (162, "SQL_SQL92_REVOKE", InfoKind::U32),
    (163, "SQL_SQL92_ROW_VALUE_CONSTRUCTOR", InfoKind::U32),
    (164, "SQL_SQL92_STRING_FUNCTIONS", InfoKind::U32),
    (165, "SQL_SQL92_VALUE_EXPRESSIONS", InfoKind::U32),
    (166, "SQL_STANDARD_CLI_CONFORMANCE", InfoKind::U32),
    (167, "SQL_STATIC_CURSOR_ATTRIBUTES1", InfoKind::U32),
    (168, "SQL_STATIC_CURSOR_ATTRIBUTES2", InfoKind::U32),
    (169, "SQL_AGGREGATE_FUNCTIONS", InfoKind::U32),
    (170, "SQL_DDL_INDEX", InfoKind::U32),
    (171, "SQL_DM_VER", InfoKind::Text),
    (172, "SQL_INSERT_STATEMENT", InfoKind::U32),
    (173, "SQL_CONVERT_GUID", InfoKind::U32),
    (10000, "SQL_XOPEN_CLI_YEAR", InfoKind::Text),
    (10002, "SQL_DESCRIBE_PARAMETER", InfoKind::YesNo),
    (10003, "SQL_CATALOG_NAME", InfoKind::YesNo),
    (10004, "SQL_COLLATION_SEQ", InfoKind::Text),
    (10005, "SQL_MAX_IDENTIFIER_LEN", InfoKind::U16),
    (10021, "SQL_ASYNC_MODE", InfoKind::U32),
    (10022, "SQL_MAX_ASYNC_CONCURRENT_STATEMENTS", InfoKind::U32),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_and_found() {
        assert!(INFO_KINDS.windows(2).all(|w| w[0].0 < w[1].0));
        // SQL_DBMS_NAME (17) is a string, SQL_ACCESSIBLE_TABLES (19) a Y/N.
        assert_eq!(info_kind(17), Some(InfoKind::Text));
        assert_eq!(info_kind(19), Some(InfoKind::YesNo));
        assert_eq!(info_kind(65000), None);
    }
}

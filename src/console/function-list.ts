/**
 * The reviewed list of functions a console query may call, and of those it refuses with the reason,
 * by the names the engine's `system.functions` lists (ClickHouse 26.7, chDB 3.4). Anything in
 * neither list is refused too: a function a newer engine adds is never called unseen.
 * `test/e2e/console-functions.test.ts` reads the engine's `system.functions` and fails on any
 * function in neither list, on a name here the engine no longer has, and on aliases or
 * case-insensitive names that differ from the engine's — so an engine upgrade forces a review.
 *
 * Reviewing: allow what computes over the query's own values; refuse what describes the server, reads
 * or writes outside the query, inspects the engine, or is internal to it.
 */

const words = (text: string): readonly string[] => text.trim().split(/\s+/);

/** Allowed functions, grouped by what they do. */
export const ALLOWED_FUNCTIONS = {
  /** Aggregate and window functions (their -If, -State, -Merge… combinators follow them). */
  aggregate: words(`
    aggThrow analysisOfVariance any any_respect_nulls anyHeavy anyLast anyLast_respect_nulls
    approx_top_k approx_top_sum argAndMax argAndMin argMax argMin avg avgWeighted boundingRatio
    categoricalInformationValue contingency corr corrMatrix corrStable count covarPop covarPopMatrix
    covarPopStable covarSamp covarSampMatrix covarSampStable cramersV cramersVBiasCorrected cume_dist
    deltaSum deltaSumTimestamp denseRank distinctDynamicTypes distinctJSONPaths
    distinctJSONPathsAndTypes entropy estimateCompressionRatio exponentialMovingAverage
    exponentialTimeDecayedAvg exponentialTimeDecayedCount exponentialTimeDecayedMax
    exponentialTimeDecayedSum groupArray groupArrayInsertAt groupArrayIntersect groupArrayLast
    groupArrayMovingAvg groupArrayMovingSum groupArraySample groupArraySorted groupBitAnd groupBitmap
    groupBitmapAnd groupBitmapOr groupBitmapXor groupBitOr groupBitXor groupConcat groupFormat
    groupNumericIndexedVector groupUniqArray histogram intervalLengthSum kolmogorovSmirnovTest kurtPop
    kurtSamp lag lagInFrame largestTriangleThreeBuckets lead leadInFrame mannWhitneyUTest max
    maxIntersections maxIntersectionsPosition maxMappedArrays meanZTest min minMappedArrays MVTEncode
    nonNegativeDerivative nothing nothingNull nothingUInt64 nth_value ntile percentRank quantile
    quantileBFloat16 quantileBFloat16Weighted quantileDD quantileDeterministic quantileExact
    quantileExactExclusive quantileExactHigh quantileExactInclusive quantileExactLow
    quantileExactWeighted quantileExactWeightedInterpolated quantileGK quantileInterpolatedWeighted
    quantilePrometheusHistogram quantiles quantilesBFloat16 quantilesBFloat16Weighted quantilesDD
    quantilesDeterministic quantilesExact quantilesExactExclusive quantilesExactHigh
    quantilesExactInclusive quantilesExactLow quantilesExactWeighted quantilesExactWeightedInterpolated
    quantilesGK quantilesInterpolatedWeighted quantilesPrometheusHistogram quantilesTDigest
    quantilesTDigestWeighted quantilesTiming quantilesTimingWeighted quantileTDigest
    quantileTDigestWeighted quantileTiming quantileTimingWeighted rank rankCorr retention row_number
    sequenceCount sequenceMatch sequenceMatchEvents sequenceNextNode simpleLinearRegression
    singleValueOrNull skewPop skewSamp sparkbar stddevPop stddevPopStable stddevSamp stddevSampStable
    stochasticLinearRegression stochasticLogisticRegression studentTTest studentTTestOneSample sum
    sumCount sumKahan sumMapFiltered sumMapFilteredWithOverflow sumMappedArrays sumMapWithOverflow
    sumWithOverflow theilsU timeSeriesChangesToGrid timeSeriesDeltaToGrid timeSeriesDerivToGrid
    timeSeriesGroupArray timeSeriesIncreaseToGrid timeSeriesInstantDeltaToGrid
    timeSeriesInstantRateToGrid timeSeriesLastTwoSamples timeSeriesPredictLinearToGrid
    timeSeriesRateToGrid timeSeriesResampleToGridWithStaleness timeSeriesResetsToGrid topK topKWeighted
    uniq uniqCombined uniqCombined64 uniqExact uniqHLL12 uniqUpTo varPop varPopStable varSamp
    varSampStable welchTTest windowFunnel
  `),
  /** Arithmetic, mathematics, rounding, bits, finance. */
  arithmetic: words(`
    abs acos acosh asin asinh atan atan2 atanh avg2 bitAnd bitCount bitHammingDistance bitNot bitOr
    bitRotateLeft bitRotateRight bitShiftLeft bitShiftRight bitSlice bitTest bitTestAll bitTestAny
    bitXor byteSwap cbrt ceil cos cosh degrees divide divideDecimal divideOrNull e erf erfc exp exp10
    exp2 factorial financialInternalRateOfReturn financialInternalRateOfReturnExtended
    financialNetPresentValue financialNetPresentValueExtended floor gcd hypot ifNotFinite intDiv
    intDivOrNull intDivOrZero intExp10 intExp2 isFinite isInfinite isNaN isPrime isProbablePrime lcm
    lgamma log log10 log1p log2 max2 midpoint min2 minus modulo moduloLegacy moduloOrNull moduloOrZero
    multiply multiplyDecimal negate pi plus positiveModulo positiveModuloOrNull pow proportionsZTest
    radians round roundAge roundBankers roundDown roundDuration roundToExp2 sigmoid sign sin sinh sqr
    sqrt tan tanh tgamma trunc widthBucket
  `),
  /** Comparison and logic (`IN` is checked for the tables it reads). */
  comparison: words(`
    and equals globalIn globalNotIn globalNotNullIn globalNullIn greater greaterOrEquals in
    isDistinctFrom isNotDistinctFrom less lessOrEquals not notEquals notIn notNullIn nullIn or xor
  `),
  /** Conditions and NULL handling. */
  conditional: words(`
    assumeNotNull caseWithExpression clamp coalesce firstNonDefault greatest if ifNull isNotNull isNull
    isNullable isZeroOrNull least multiIf nullIf toNullable
  `),
  /** Dates, times, intervals and time windows. */
  dates: words(`
    addDate addDays addHours addInterval addMicroseconds addMilliseconds addMinutes addMonths
    addNanoseconds addQuarters addSeconds addTupleOfIntervals addWeeks addYears age changeDay changeHour
    changeMinute changeMonth changeSecond changeYear dateDiff dateName dateTrunc formatDateTime
    formatDateTimeInJodaSyntax fromDaysSinceYearZero fromDaysSinceYearZero32 fromModifiedJulianDay
    fromModifiedJulianDayOrNull fromUnixTimestamp fromUnixTimestampInJodaSyntax fromUTCTimestamp hop
    hopEnd hopStart localtime makeDate makeDate32 makeDateTime makeDateTime64 monthName now now64
    nowInBlock nowInBlock64 subDate subtractDays subtractHours subtractInterval subtractMicroseconds
    subtractMilliseconds subtractMinutes subtractMonths subtractNanoseconds subtractQuarters
    subtractSeconds subtractTupleOfIntervals subtractWeeks subtractYears timeDiff timeSlot timeSlots
    timestamp timezoneOf timezoneOffset today toDayOfMonth toDayOfWeek toDayOfYear toDaysInMonth
    toDaysSinceYearZero toHour toISOWeek toISOYear toLastDayOfMonth toLastDayOfWeek toMicrosecond
    toMillisecond toMinute toModifiedJulianDay toModifiedJulianDayOrNull toMonday toMonth
    toMonthNumSinceEpoch toNanosecond toQuarter toRelativeDayNum toRelativeHourNum toRelativeMinuteNum
    toRelativeMonthNum toRelativeQuarterNum toRelativeSecondNum toRelativeWeekNum toRelativeYearNum
    toSecond toStartOfDay toStartOfFifteenMinutes toStartOfFiveMinutes toStartOfHour toStartOfInterval
    toStartOfISOYear toStartOfMicrosecond toStartOfMillisecond toStartOfMinute toStartOfMonth
    toStartOfNanosecond toStartOfQuarter toStartOfSecond toStartOfTenMinutes toStartOfWeek toStartOfYear
    toTimeWithFixedDate toTimezone toUnixTimestamp toUTCTimestamp toWeek toYear toYearNumSinceEpoch
    toYearWeek toYYYYMM toYYYYMMDD toYYYYMMDDhhmmss tumble tumbleEnd tumbleStart UTCTimestamp windowID
    yesterday YYYYMMDDhhmmssToDateTime YYYYMMDDhhmmssToDateTime64 YYYYMMDDToDate YYYYMMDDToDate32
  `),
  /** Strings: search, replace, split, encode. */
  strings: words(`
    alphaTokens appendTrailingCharIfAbsent arrayStringConcat ascii base32Decode base32Encode
    base58Decode base58Encode base64Decode base64Encode base64URLDecode base64URLEncode basename bin
    bitmaskToArray bitmaskToList bitPositionsToArray byteHammingDistance caseFoldUTF8 char
    compareSubstrings concat concatAssumeInjective concatWithSeparator
    concatWithSeparatorAssumeInjective conv convertCharset countMatches countMatchesCaseInsensitive
    countSubstrings countSubstringsCaseInsensitive countSubstringsCaseInsensitiveUTF8 CRC32 CRC32IEEE
    CRC64 damerauLevenshteinDistance decodeHTMLComponent decodeXMLComponent editDistance
    editDistanceUTF8 encodeXMLComponent endsWith endsWithCaseInsensitive endsWithCaseInsensitiveUTF8
    endsWithUTF8 extract extractAll extractAllGroupsHorizontal extractAllGroupsVertical extractGroups
    extractTextFromHTML firstLine format hasAllTokens hasAnyTokens hasPhrase hasSubsequence
    hasSubsequenceCaseInsensitive hasSubsequenceCaseInsensitiveUTF8 hasSubsequenceUTF8 hasToken
    hasTokenCaseInsensitive hasTokenCaseInsensitiveOrNull hasTokenOrNull hex highlight hilbertDecode
    hilbertEncode ilike initcap initcapUTF8 isValidASCII isValidUTF8 jaroSimilarity
    jaroWinklerSimilarity left leftPad leftPadUTF8 leftUTF8 lengthUTF8 like locate lower lowerUTF8 match
    mortonDecode mortonEncode multiFuzzyMatchAllIndices multiFuzzyMatchAny multiFuzzyMatchAnyIndex
    multiMatchAllIndices multiMatchAny multiMatchAnyIndex multiSearchAllPositions
    multiSearchAllPositionsCaseInsensitive multiSearchAllPositionsCaseInsensitiveUTF8
    multiSearchAllPositionsUTF8 multiSearchAny multiSearchAnyCaseInsensitive
    multiSearchAnyCaseInsensitiveUTF8 multiSearchAnyUTF8 multiSearchFirstIndex
    multiSearchFirstIndexCaseInsensitive multiSearchFirstIndexCaseInsensitiveUTF8
    multiSearchFirstIndexUTF8 multiSearchFirstPosition multiSearchFirstPositionCaseInsensitive
    multiSearchFirstPositionCaseInsensitiveUTF8 multiSearchFirstPositionUTF8 naiveBayesNgrams
    naturalSortKey ngramDistance ngramDistanceCaseInsensitive ngramDistanceCaseInsensitiveUTF8
    ngramDistanceUTF8 ngrams ngramSearch ngramSearchCaseInsensitive ngramSearchCaseInsensitiveUTF8
    ngramSearchUTF8 normalizeUTF8NFC normalizeUTF8NFD normalizeUTF8NFKC normalizeUTF8NFKCCasefold
    normalizeUTF8NFKD notILike notLike overlay overlayUTF8 position positionCaseInsensitive
    positionCaseInsensitiveUTF8 positionUTF8 printf regexpExtract regexpPosition regexpQuoteMeta
    removeDiacriticsUTF8 repeat replaceAll replaceOne replaceRegexpAll replaceRegexpOne
    reverseBySeparator reverseUTF8 right rightPad rightPadUTF8 rightUTF8 soundex space sparseGrams
    sparseGramsHashes sparseGramsHashesUTF8 sparseGramsUTF8 splitByChar splitByNonAlpha splitByRegexp
    splitByString splitByWhitespace sqidDecode sqidEncode startsWith startsWithCaseInsensitive
    startsWithCaseInsensitiveUTF8 startsWithUTF8 stringBytesEntropy stringBytesUniq stringJaccardIndex
    stringJaccardIndexUTF8 substring substringIndex substringIndexUTF8 substringUTF8 tokens
    tokensForLikePattern toValidUTF8 translate translateUTF8 trimBoth trimLeft trimRight tryBase32Decode
    tryBase58Decode tryBase64Decode tryBase64URLDecode unbin unhex upper upperUTF8
  `),
  /** Arrays (`arrayReduce` and friends are checked for the aggregate they name). */
  arrays: words(`
    array arrayAll arrayAUCPR arrayAutocorrelation arrayAvg arrayBottomK arrayCompact arrayConcat
    arrayCount arrayCumSum arrayCumSumNonNegative arrayDifference arrayDistinct arrayDotProduct
    arrayElement arrayElementOrNull arrayEnumerate arrayEnumerateDense arrayEnumerateDenseRanked
    arrayEnumerateUniq arrayEnumerateUniqRanked arrayExcept arrayExists arrayFill arrayFilter arrayFirst
    arrayFirstIndex arrayFirstOrNull arrayFlatten arrayFold arrayIntersect arrayJaccardIndex arrayJoin
    arrayLast arrayLastIndex arrayLastOrNull arrayLevenshteinDistance arrayLevenshteinDistanceWeighted
    arrayMap arrayMax arrayMin arrayNormalizedGini arrayPartialReverseSort arrayPartialShuffle
    arrayPartialSort arrayPopBack arrayPopFront arrayProduct arrayPushBack arrayPushFront
    arrayRandomSample arrayReduce arrayReduceInRanges arrayRemove arrayResize arrayReverse
    arrayReverseFill arrayReverseSort arrayReverseSplit arrayROCAUC arrayRotateLeft arrayRotateRight
    arrayShiftLeft arrayShiftRight arrayShingles arrayShuffle arraySimilarity arraySlice arraySort
    arraySplit arraySum arraySymmetricDifference arrayTopK arrayTranspose arrayUnion arrayUniq
    arrayWithConstant arrayZip arrayZipUnaligned countEqual empty emptyArrayDate emptyArrayDateTime
    emptyArrayFloat32 emptyArrayFloat64 emptyArrayInt16 emptyArrayInt32 emptyArrayInt64 emptyArrayInt8
    emptyArrayString emptyArrayToSingle emptyArrayUInt16 emptyArrayUInt32 emptyArrayUInt64
    emptyArrayUInt8 has hasAll hasAny hasSubstr indexOf indexOfAssumeSorted length notEmpty
    randomHadamardTransform range replicate reverse
  `),
  /** Maps and tuples. */
  maps: words(`
    dotProduct extractKeyValuePairs extractKeyValuePairsWithEscaping flattenTuple map mapAdd mapAll
    mapApply mapConcat mapContainsKey mapContainsKeyLike mapContainsValue mapContainsValueLike mapExists
    mapExtractKeyLike mapExtractValueLike mapFilter mapFromArrays mapKeys mapPartialReverseSort
    mapPartialSort mapPopulateSeries mapReverseSort mapSort mapSubtract mapUpdate mapValues tuple
    tupleConcat tupleDivide tupleDivideByNumber tupleElement tupleHammingDistance tupleIntDiv
    tupleIntDivByNumber tupleIntDivOrZero tupleIntDivOrZeroByNumber tupleMinus tupleModulo
    tupleModuloByNumber tupleMultiply tupleMultiplyByNumber tupleNames tupleNegate tuplePlus
    tuplePositiveModuloByNumber tupleToNameValuePairs
  `),
  /** JSON text and the JSON / Dynamic / Variant types. */
  json: words(`
    dynamicElement dynamicType isDynamicElementInSharedData isValidJSON JSON_EXISTS JSON_QUERY
    JSON_VALUE JSONAllPaths JSONAllPathsWithTypes JSONAllValues JSONArrayLength JSONDynamicPaths
    JSONDynamicPathsWithTypes JSONExtract JSONExtractArrayRaw JSONExtractArrayRawCaseInsensitive
    JSONExtractBool JSONExtractBoolCaseInsensitive JSONExtractCaseInsensitive JSONExtractFloat
    JSONExtractFloatCaseInsensitive JSONExtractInt JSONExtractIntCaseInsensitive JSONExtractKeys
    JSONExtractKeysAndValues JSONExtractKeysAndValuesCaseInsensitive JSONExtractKeysAndValuesRaw
    JSONExtractKeysAndValuesRawCaseInsensitive JSONExtractKeysCaseInsensitive JSONExtractRaw
    JSONExtractRawCaseInsensitive JSONExtractString JSONExtractStringCaseInsensitive JSONExtractUInt
    JSONExtractUIntCaseInsensitive JSONHas JSONKey JSONLength JSONMergePatch JSONSharedDataPaths
    JSONSharedDataPathsWithTypes JSONType prettyPrintJSON simpleJSONExtractBool simpleJSONExtractFloat
    simpleJSONExtractInt simpleJSONExtractRaw simpleJSONExtractString simpleJSONExtractUInt
    simpleJSONHas toJSONString
  `),
  /** Type conversion and parsing. */
  conversion: words(`
    _CAST accurateCast accurateCastOrDefault accurateCastOrNull CAST DATE formatRow formatRowNoNewline
    fromUnixTimestamp64Micro fromUnixTimestamp64Milli fromUnixTimestamp64Nano fromUnixTimestamp64Second
    parseDateTime parseDateTime32BestEffort parseDateTime32BestEffortOrNull
    parseDateTime32BestEffortOrZero parseDateTime64 parseDateTime64BestEffort
    parseDateTime64BestEffortOrNull parseDateTime64BestEffortOrZero parseDateTime64BestEffortUS
    parseDateTime64BestEffortUSOrNull parseDateTime64BestEffortUSOrZero parseDateTime64InJodaSyntax
    parseDateTime64InJodaSyntaxOrNull parseDateTime64InJodaSyntaxOrZero parseDateTime64OrNull
    parseDateTime64OrZero parseDateTimeBestEffort parseDateTimeBestEffortOrNull
    parseDateTimeBestEffortOrZero parseDateTimeBestEffortUS parseDateTimeBestEffortUSOrNull
    parseDateTimeBestEffortUSOrZero parseDateTimeInJodaSyntax parseDateTimeInJodaSyntaxOrNull
    parseDateTimeInJodaSyntaxOrZero parseDateTimeOrNull parseDateTimeOrZero reinterpret
    reinterpretAsDate reinterpretAsDateTime reinterpretAsFixedString reinterpretAsFloat32
    reinterpretAsFloat64 reinterpretAsInt128 reinterpretAsInt16 reinterpretAsInt256 reinterpretAsInt32
    reinterpretAsInt64 reinterpretAsInt8 reinterpretAsString reinterpretAsUInt128 reinterpretAsUInt16
    reinterpretAsUInt256 reinterpretAsUInt32 reinterpretAsUInt64 reinterpretAsUInt8 reinterpretAsUUID
    toBFloat16 toBFloat16OrNull toBFloat16OrZero toBool toDate toDate32 toDate32OrDefault toDate32OrNull
    toDate32OrZero toDateOrDefault toDateOrNull toDateOrZero toDateTime toDateTime32 toDateTime64
    toDateTime64OrDefault toDateTime64OrNull toDateTime64OrZero toDateTimeOrDefault toDateTimeOrNull
    toDateTimeOrZero toDecimal128 toDecimal128OrDefault toDecimal128OrNull toDecimal128OrZero
    toDecimal256 toDecimal256OrDefault toDecimal256OrNull toDecimal256OrZero toDecimal32
    toDecimal32OrDefault toDecimal32OrNull toDecimal32OrZero toDecimal64 toDecimal64OrDefault
    toDecimal64OrNull toDecimal64OrZero toDecimalString toFixedString toFloat32 toFloat32OrDefault
    toFloat32OrNull toFloat32OrZero toFloat64 toFloat64OrDefault toFloat64OrNull toFloat64OrZero
    toInt128 toInt128OrDefault toInt128OrNull toInt128OrZero toInt16 toInt16OrDefault toInt16OrNull
    toInt16OrZero toInt256 toInt256OrDefault toInt256OrNull toInt256OrZero toInt32 toInt32OrDefault
    toInt32OrNull toInt32OrZero toInt64 toInt64OrDefault toInt64OrNull toInt64OrZero toInt8
    toInt8OrDefault toInt8OrNull toInt8OrZero toInterval toIntervalDay toIntervalHour
    toIntervalMicrosecond toIntervalMillisecond toIntervalMinute toIntervalMonth toIntervalNanosecond
    toIntervalQuarter toIntervalSecond toIntervalWeek toIntervalYear toLowCardinality toString
    toStringCutToZero toTime toTime64 toTime64OrNull toTime64OrZero toTimeOrNull toTimeOrZero toUInt128
    toUInt128OrDefault toUInt128OrNull toUInt128OrZero toUInt16 toUInt16OrDefault toUInt16OrNull
    toUInt16OrZero toUInt256 toUInt256OrDefault toUInt256OrNull toUInt256OrZero toUInt32
    toUInt32OrDefault toUInt32OrNull toUInt32OrZero toUInt64 toUInt64OrDefault toUInt64OrNull
    toUInt64OrZero toUInt8 toUInt8OrDefault toUInt8OrNull toUInt8OrZero toUnixTimestamp64Micro
    toUnixTimestamp64Milli toUnixTimestamp64Nano toUnixTimestamp64Second toUUID toUUIDOrZero
  `),
  /** Hashes and fingerprints. */
  hashes: words(`
    cityHash64 farmFingerprint64 farmHash64 gccMurmurHash halfMD5 hiveHash icebergHash intHash32
    intHash64 javaHash javaHashUTF16LE jumpConsistentHash kafkaMurmurHash keccak256 kostikConsistentHash
    MD4 MD5 metroHash64 murmurHash2_32 murmurHash2_64 murmurHash3_128 murmurHash3_32 murmurHash3_64
    ngramMinHash ngramMinHashArg ngramMinHashArgCaseInsensitive ngramMinHashArgCaseInsensitiveUTF8
    ngramMinHashArgUTF8 ngramMinHashCaseInsensitive ngramMinHashCaseInsensitiveUTF8 ngramMinHashUTF8
    ngramSimHash ngramSimHashCaseInsensitive ngramSimHashCaseInsensitiveUTF8 ngramSimHashUTF8 RIPEMD160
    SHA1 SHA224 SHA256 SHA384 SHA512 SHA512_256 sipHash128 sipHash128Keyed sipHash128Reference
    sipHash128ReferenceKeyed sipHash64 sipHash64Keyed URLHash wordShingleMinHash wordShingleMinHashArg
    wordShingleMinHashArgCaseInsensitive wordShingleMinHashArgCaseInsensitiveUTF8
    wordShingleMinHashArgUTF8 wordShingleMinHashCaseInsensitive wordShingleMinHashCaseInsensitiveUTF8
    wordShingleMinHashUTF8 wordShingleSimHash wordShingleSimHashCaseInsensitive
    wordShingleSimHashCaseInsensitiveUTF8 wordShingleSimHashUTF8 wyHash64 xxh3 xxh3_128 xxHash32
    xxHash64 xxHash64Spark
  `),
  /** URLs, IP and MAC addresses. */
  web: words(`
    cutFragment cutIPv6 cutQueryString cutQueryStringAndFragment cutToFirstSignificantSubdomain
    cutToFirstSignificantSubdomainCustom cutToFirstSignificantSubdomainCustomRFC
    cutToFirstSignificantSubdomainCustomWithWWW cutToFirstSignificantSubdomainCustomWithWWWRFC
    cutToFirstSignificantSubdomainRFC cutToFirstSignificantSubdomainWithWWW
    cutToFirstSignificantSubdomainWithWWWRFC cutURLParameter cutWWW decodeURLComponent
    decodeURLFormComponent domain domainRFC domainWithoutWWW domainWithoutWWWRFC encodeURLComponent
    encodeURLFormComponent extractURLParameter extractURLParameterNames extractURLParameters
    firstSignificantSubdomain firstSignificantSubdomainCustom firstSignificantSubdomainCustomRFC
    firstSignificantSubdomainRFC fragment IPv4CIDRToRange IPv4NumToString IPv4NumToStringClassC
    IPv4StringToNum IPv4StringToNumOrDefault IPv4StringToNumOrNull IPv4ToIPv6 IPv6CIDRToRange
    IPv6NumToString IPv6StringToNum IPv6StringToNumOrDefault IPv6StringToNumOrNull isIPAddressInRange
    isIPv4String isIPv6String MACNumToString MACStringToNum MACStringToOUI netloc path pathFull port
    portRFC protocol queryString queryStringAndFragment toIPv4 toIPv4OrDefault toIPv4OrNull toIPv4OrZero
    toIPv6 toIPv6OrDefault toIPv6OrNull toIPv6OrZero topLevelDomain topLevelDomainRFC URLHierarchy
    URLPathHierarchy
  `),
  /** UUIDs and Snowflake ids. */
  ids: words(`
    dateTime64ToSnowflakeID dateTimeToSnowflakeID dateTimeToUUIDv7 generateSnowflakeID generateUUIDv4
    generateUUIDv7 snowflakeIDToDateTime snowflakeIDToDateTime64 toUUIDOrDefault toUUIDOrNull
    UUIDNumToString UUIDStringToNum UUIDToNum UUIDv7ToDateTime
  `),
  /** Geography, geometry and vector distances. */
  geo: words(`
    areaCartesian areaSpherical cosineDistance cosineDistanceTransposed
    cosineDistanceTransposedQuantized dotProductTransposed dotProductTransposedQuantized geoDistance
    geohashDecode geohashEncode geohashesInBox geometryIntersectCartesian geometryIntersectSpherical
    geoToH3 geoToMGRS geoToUTM greatCircleAngle greatCircleDistance h3CellAreaM2 h3CellAreaRads2
    h3Distance h3EdgeAngle h3EdgeLengthKm h3EdgeLengthM h3ExactEdgeLengthKm h3ExactEdgeLengthM
    h3ExactEdgeLengthRads h3GetBaseCell h3GetDestinationIndexFromUnidirectionalEdge h3GetFaces
    h3GetIndexesFromUnidirectionalEdge h3GetOriginIndexFromUnidirectionalEdge h3GetPentagonIndexes
    h3GetRes0Indexes h3GetResolution h3GetUnidirectionalEdge h3GetUnidirectionalEdgeBoundary
    h3GetUnidirectionalEdgesFromHexagon h3HexAreaKm2 h3HexAreaM2 h3HexRing h3IndexesAreNeighbors
    h3IsPentagon h3IsResClassIII h3IsValid h3kRing h3Line h3NumHexagons h3PointDistKm h3PointDistM
    h3PointDistRads h3PolygonToCells h3PolygonToCellsWithContainment h3ToCenterChild h3ToChildren
    h3ToGeo h3ToGeoBoundary h3ToParent h3ToString h3UnidirectionalEdgeIsValid L1Distance L1Norm
    L1Normalize L2Distance L2DistanceTransposed L2DistanceTransposedQuantized L2Norm L2Normalize
    L2SquaredDistance L2SquaredNorm LinfDistance LinfNorm LinfNormalize LpDistance LpNorm LpNormalize
    MGRSToGeo MVTBoundingBox MVTBoundingBoxMercator MVTEncodeGeom perimeterCartesian perimeterSpherical
    pointInEllipses pointInPolygon polygonAreaCartesian polygonAreaSpherical polygonConvexHullCartesian
    polygonPerimeterCartesian polygonPerimeterSpherical polygonsDistanceCartesian
    polygonsDistanceSpherical polygonsEqualsCartesian polygonsIntersectCartesian
    polygonsIntersectionCartesian polygonsIntersectionSpherical polygonsIntersectSpherical
    polygonsSymDifferenceCartesian polygonsSymDifferenceSpherical polygonsUnionCartesian
    polygonsUnionSpherical polygonsWithinCartesian polygonsWithinSpherical readWKB readWKBLineString
    readWKBMultiLineString readWKBMultiPolygon readWKBPoint readWKBPolygon readWKT readWKTLineString
    readWKTMultiLineString readWKTMultiPolygon readWKTPoint readWKTPolygon readWKTRing stringToH3 svg
    UTMToGeo wkb wkt
  `),
  /** Bitmaps and indexed vectors. */
  bitmaps: words(`
    bitmapAnd bitmapAndCardinality bitmapAndnot bitmapAndnotCardinality bitmapBuild bitmapCardinality
    bitmapContains bitmapHasAll bitmapHasAny bitmapMax bitmapMin bitmapOr bitmapOrCardinality
    bitmapSubsetInRange bitmapSubsetLimit bitmapToArray bitmapTransform bitmapXor bitmapXorCardinality
    dequantizeInt8ToBFloat16 numericIndexedVectorAllValueSum numericIndexedVectorBuild
    numericIndexedVectorCardinality numericIndexedVectorGetValue numericIndexedVectorPointwiseAdd
    numericIndexedVectorPointwiseDivide numericIndexedVectorPointwiseEqual
    numericIndexedVectorPointwiseGreater numericIndexedVectorPointwiseGreaterEqual
    numericIndexedVectorPointwiseLess numericIndexedVectorPointwiseLessEqual
    numericIndexedVectorPointwiseMultiply numericIndexedVectorPointwiseNotEqual
    numericIndexedVectorPointwiseSubtract numericIndexedVectorShortDebugString numericIndexedVectorToMap
    quantizeBFloat16ToInt8 subBitmap
  `),
  /** Random numbers and strings. */
  random: words(`
    fuzzBits rand rand64 randBernoulli randBinomial randCanonical randChiSquared randConstant
    randExponential randFisherF randLogNormal randNegativeBinomial randNormal randomFixedString
    randomPrintableASCII randomString randomStringUTF8 randPoisson randStudentT randUniform
  `),
  /** Encryption with keys given in the query. */
  encryption: words(`
    aes_decrypt_mysql aes_encrypt_mysql decrypt encrypt HMAC tryDecrypt
  `),
  /** Time series over the query's own rows. */
  timeSeries: words(`
    seriesDecomposeSTL seriesOutliersDetectTukey timeSeriesCopyTag timeSeriesCopyTags
    timeSeriesExtractTag timeSeriesFromGrid timeSeriesGroupToSamplingKey timeSeriesGroupToTags
    timeSeriesIdToGroup timeSeriesIdToTags timeSeriesJoinTags timeSeriesRange
    timeSeriesRemoveAllTagsExcept timeSeriesRemoveTag timeSeriesRemoveTags timeSeriesReplaceTag
    timeSeriesStoreTags timeSeriesTagsToGroup timeSeriesThrowDuplicateSeriesIf
  `),
  /** Formatting, type inspection, running values, sleeps and throwIf (bounded by the time limit). */
  other: words(`
    bar blockNumber blockSerializedSize blockSize byteSize colorOKLABToSRGB colorOKLCHToSRGB
    colorSRGBToOKLAB colorSRGBToOKLCH countDigits defaultValueOfArgumentType defaultValueOfTypeName
    digits dumpColumnStructure errorCodeToName finalizeAggregation flipCoordinates formatQuery
    formatQueryOrNull formatQuerySingleLine formatQuerySingleLineOrNull formatReadableDecimalSize
    formatReadableQuantity formatReadableSize formatReadableTimeDelta fuzzQuery generateRandomStructure
    getSizeOfEnumType getSubcolumn getTypeSerializationStreams highlightQuery icebergBucket
    icebergTruncate identity ignore indexHint initializeAggregation isConstant isDecimalOverflow
    lowCardinalityIndices lowCardinalityKeys materialize minSampleSizeContinuous minSampleSizeConversion
    neighbor normalizedQueryHash normalizedQueryHashKeepNames normalizeQuery normalizeQueryKeepNames
    obfuscateQuery obfuscateQueryWithSeed parseReadableSize parseReadableSizeOrNull
    parseReadableSizeOrZero parseTimeDelta partitionId rowNumberInAllBlocks rowNumberInBlock
    runningAccumulate runningConcurrency runningDifference runningDifferenceStartingWithFirstValue sleep
    sleepEachRow structureToCapnProtoSchema structureToProtobufSchema throwIf toColumnTypeName
    tokenizeQuery toTypeName transform variantElement variantType visibleWidth
  `),
  /** Parsed syntax: `x -> …`, `EXISTS (…)`, `GROUPING(…)`, `untuple(…)` are no entries of system.functions. */
  syntax: words("lambda exists grouping untuple"),
} as const;

/** Refused functions, grouped by why; the reason ends the refusal message. */
export const REFUSED_FUNCTIONS: Readonly<Record<string, { why: string; names: readonly string[] }>> = {
  server: {
    why: "it describes the server, not the analyst's data",
    names: words(`
      authenticatedUser buildId chdb connectionId currentDatabase currentProfiles currentQueryID
      currentRoles currentSchemas currentUser defaultProfiles defaultRoles displayName enabledProfiles
      enabledRoles filesystemAvailable filesystemCapacity filesystemUnreserved FQDN getClientHTTPHeader
      getMacro getMaxTableNameLengthForDatabase getMergeTreeSetting getOSKernelVersion getServerPort
      getServerSetting getSetting getSettingOrDefault globalVariable hasColumnInTable hasThreadFuzzer
      hostName initialQueryID initialQueryStartTime queryID revision serverTimezone serverUUID shardCount
      shardNum showCertificate tcpPort timezone transactionID transactionLatestSnapshot
      transactionOldestSnapshot uptime version zookeeperSessionUptime
    `),
  },
  files: {
    why: "it reads files, tables or models on the server, or calls another service",
    names: words(`
      aiClassify aiEmbed aiExtract aiGenerate aiTranslate catboostEvaluate evalMLMethod file joinGet
      joinGetOrNull naiveBayesClassifier naiveBayesClassifierWithAllProbs naiveBayesClassifierWithProb
    `),
  },
  dictionaries: {
    why: "dictionaries are not available",
    names: words(`
      dictGet dictGetAll dictGetChildren dictGetDate dictGetDateOrDefault dictGetDateTime
      dictGetDateTimeOrDefault dictGetDescendants dictGetFloat32 dictGetFloat32OrDefault dictGetFloat64
      dictGetFloat64OrDefault dictGetHierarchy dictGetInt16 dictGetInt16OrDefault dictGetInt32
      dictGetInt32OrDefault dictGetInt64 dictGetInt64OrDefault dictGetInt8 dictGetInt8OrDefault
      dictGetIPv4 dictGetIPv4OrDefault dictGetIPv6 dictGetIPv6OrDefault dictGetKeys dictGetOrDefault
      dictGetOrNull dictGetRoot dictGetString dictGetStringOrDefault dictGetUInt16 dictGetUInt16OrDefault
      dictGetUInt32 dictGetUInt32OrDefault dictGetUInt64 dictGetUInt64OrDefault dictGetUInt8
      dictGetUInt8OrDefault dictGetUUID dictGetUUIDOrDefault dictHas dictIsIn regionHierarchy regionIn
      regionToArea regionToCity regionToContinent regionToCountry regionToDistrict regionToName
      regionToPopulation regionToTopContinent
    `),
  },
  state: {
    why: "it changes state outside the query (a counter in Keeper, the server log)",
    names: words(`
      generateSerialID logTrace
    `),
  },
  introspection: {
    why: "it inspects the engine itself (its binary, threads and parts)",
    names: words(`
      addressToLine addressToLineWithInlines addressToSymbol demangle flameGraph isMergeTreePartCoveredBy
      mergeTreePartInfo tid
    `),
  },
  internal: {
    why: "it is internal to the engine",
    names: words(`
      __actionName __applyFilter __bitBoolMaskAnd __bitBoolMaskOr __bitSwapLastTwo __bitWrapperFunc
      __getScalar __patchPartitionID __scalarSubqueryResult __toYearCalendarOnly globalInIgnoreSet
      globalNotInIgnoreSet globalNotNullInIgnoreSet globalNullInIgnoreSet inIgnoreSet nested
      notInIgnoreSet notNullInIgnoreSet nullInIgnoreSet validateNestedArraySizes
    `),
  },
};

/** `alias=target` as the engine registers them: an alias is its target's function. */
export const FUNCTION_ALIASES: readonly string[] = words(`
  AIClassify=aiClassify AIExtract=aiExtract AIGenerate=aiGenerate AITranslate=aiTranslate
  anova=analysisOfVariance any_value_respect_nulls=any_respect_nulls any_value=any
  anyLastRespectNulls=anyLast_respect_nulls anyRespectNulls=any_respect_nulls
  anyValueRespectNulls=any_respect_nulls approx_top_count=approx_top_k array_agg=groupArray
  array_concat_agg=groupArrayArray array_remove=arrayRemove array_to_string=arrayStringConcat
  arrayAUC=arrayROCAUC arrayPRAUC=arrayAUCPR authUser=authenticatedUser BIT_AND=groupBitAnd
  BIT_OR=groupBitOr BIT_XOR=groupBitXor byteSlice=substring CARDINALITY=length
  caseWithExpr=caseWithExpression caseWithoutExpr=multiIf caseWithoutExpression=multiIf ceiling=ceil
  CHAR_LENGTH=lengthUTF8 CHARACTER_LENGTH=lengthUTF8 concat_ws=concatWithSeparator
  connection_id=connectionID COVAR_POP=covarPop COVAR_SAMP=covarSamp curdate=today
  current_database=currentDatabase current_date=today current_query_id=currentQueryID
  current_schemas=currentSchemas current_timestamp=now current_user=currentUser
  DATABASE=currentDatabase date_bin=toStartOfInterval date_diff=dateDiff DATE_DIFF=dateDiff
  DATE_FORMAT=formatDateTime DATE_TRUNC=dateTrunc DAY=toDayOfMonth DAYOFMONTH=toDayOfMonth
  DAYOFWEEK=toDayOfWeek DAYOFYEAR=toDayOfYear dense_rank=denseRank distanceCosine=cosineDistance
  distanceCosineTransposed=cosineDistanceTransposed distanceL1=L1Distance distanceL2=L2Distance
  distanceL2Squared=L2SquaredDistance distanceL2Transposed=L2DistanceTransposed
  distanceLinf=LinfDistance distanceLp=LpDistance extractAllGroups=extractAllGroupsVertical
  first_value_respect_nulls=any_respect_nulls first_value=any firstValueRespectNulls=any_respect_nulls
  flatten=arrayFlatten FORMAT_BYTES=formatReadableSize FROM_BASE64=base64Decode
  FROM_DAYS=fromDaysSinceYearZero FROM_UNIXTIME=fromUnixTimestamp from_utc_timestamp=fromUTCTimestamp
  fullHostName=FQDN group_concat=groupConcat hasAllToken=hasAllTokens hasAnyToken=hasAnyTokens
  hostname=hostName HOUR=toHour INET_ATON=IPv4StringToNum INET_NTOA=IPv4NumToString
  INET6_ATON=IPv6StringToNum INET6_NTOA=IPv6NumToString initial_query_id=initialQueryID
  initial_query_start_time=initialQueryStartTime instr=positionCaseInsensitive isASCII=isValidASCII
  JSON_ARRAY_LENGTH=JSONArrayLength jsonMergePatch=JSONMergePatch LAST_DAY=toLastDayOfMonth
  last_value_respect_nulls=anyLast_respect_nulls last_value=anyLast
  lastValueRespectNulls=anyLast_respect_nulls lcase=lower levenshteinDistance=editDistance
  levenshteinDistanceUTF8=editDistanceUTF8 ln=log localtimestamp=now lpad=leftPad ltrim=trimLeft
  lttb=largestTriangleThreeBuckets MAP_FROM_ARRAYS=mapFromArrays mapContains=mapContainsKey
  mapFromString=extractKeyValuePairs matchPhrase=hasPhrase max_by=argMax median=quantile
  medianBFloat16=quantileBFloat16 medianBFloat16Weighted=quantileBFloat16Weighted medianDD=quantileDD
  medianDeterministic=quantileDeterministic medianExact=quantileExact
  medianExactHigh=quantileExactHigh medianExactLow=quantileExactLow
  medianExactWeighted=quantileExactWeighted
  medianExactWeightedInterpolated=quantileExactWeightedInterpolated medianGK=quantileGK
  medianInterpolatedWeighted=quantileInterpolatedWeighted medianTDigest=quantileTDigest
  medianTDigestWeighted=quantileTDigestWeighted medianTiming=quantileTiming
  medianTimingWeighted=quantileTimingWeighted MICROSECOND=toMicrosecond mid=substring
  MILLISECOND=toMillisecond min_by=argMin minSampleSizeContinous=minSampleSizeContinuous
  MINUTE=toMinute mismatches=byteHammingDistance mod=modulo modOrNull=moduloOrNull MONTH=toMonth
  NANOSECOND=toNanosecond NATURAL_SORT_KEY=naturalSortKey normalizeL1=L1Normalize
  normalizeL2=L2Normalize normalizeLinf=LinfNormalize normalizeLp=LpNormalize normL1=L1Norm
  normL2=L2Norm normL2Squared=L2SquaredNorm normLinf=LinfNorm normLp=LpNorm OCTET_LENGTH=length
  partitionID=partitionId percent_rank=percentRank pmod=positiveModulo pmodOrNull=positiveModuloOrNull
  positive_modulo_or_null=positiveModuloOrNull positive_modulo=positiveModulo power=pow
  QUARTER=toQuarter query_id=queryID rand32=rand readWkb=readWKB readWkt=readWKT
  REGEXP_EXTRACT=regexpExtract regexp_instr=regexpPosition REGEXP_MATCHES=match
  REGEXP_REPLACE=replaceRegexpAll REGEXP_SUBSTR=regexpExtract regexpInstr=regexpPosition
  removeAccentsUTF8=removeDiacriticsUTF8 replace=replaceAll rpad=rightPad rtrim=trimRight
  scalarProduct=dotProduct scalarProductTransposed=dotProductTransposed SCHEMA=currentDatabase
  SECOND=toSecond serverTimeZone=serverTimezone session_user=currentUser sparkBar=sparkbar
  splitByAlpha=alphaTokens sqid=sqidEncode ST_AsMVT=MVTEncode ST_AsMVTGeom=MVTEncodeGeom
  ST_LineFromWKB=readWKBLineString ST_MLineFromWKB=readWKBMultiLineString
  ST_MPolyFromWKB=readWKBMultiPolygon ST_PointFromWKB=readWKBPoint ST_PolyFromWKB=readWKBPolygon
  STD=stddevPop STDDEV_POP=stddevPop STDDEV_SAMP=stddevSamp STDDEV=stddevSamp
  str_to_date=parseDateTimeOrNull str_to_map=extractKeyValuePairs string_agg=groupConcat
  substr=substring SUBSTRING_INDEX=substringIndex SVG=svg time_bucket=toStartOfInterval
  timeSeriesIdToTagsGroup=timeSeriesIdToGroup
  timeSeriesLastToGrid=timeSeriesResampleToGridWithStaleness
  timeSeriesTagsGroupToTags=timeSeriesGroupToTags timestamp_diff=dateDiff TIMESTAMP_DIFF=dateDiff
  timestampDiff=dateDiff timeZone=timezone timeZoneOf=timezoneOf timeZoneOffset=timezoneOffset
  TO_BASE64=base64Encode TO_DAYS=toDaysSinceYearZero TO_UNIXTIME=parseDateTime
  to_utc_timestamp=toUTCTimestamp toStartOfFiveMinute=toStartOfFiveMinutes toTimeZone=toTimezone
  trim=trimBoth truncate=trunc ucase=upper unnest=arrayJoin user=currentUser
  UTC_timestamp=UTCTimestamp VAR_POP=varPop VAR_SAMP=varSamp vectorDifference=tupleMinus
  vectorSum=tuplePlus visitParamExtractBool=simpleJSONExtractBool
  visitParamExtractFloat=simpleJSONExtractFloat visitParamExtractInt=simpleJSONExtractInt
  visitParamExtractRaw=simpleJSONExtractRaw visitParamExtractString=simpleJSONExtractString
  visitParamExtractUInt=simpleJSONExtractUInt visitParamHas=simpleJSONHas week=toWeek
  width_bucket=widthBucket WKB=wkb WKT=wkt yandexConsistentHash=kostikConsistentHash YEAR=toYear
  yearweek=toYearWeek
`);

/** Names (functions and aliases) the engine also finds in any letter case. */
export const CASE_INSENSITIVE_NAMES: readonly string[] = words(`
  _CAST abs acos addDate age analysisOfVariance anova any_value any_value_respect_nulls
  approx_top_count approx_top_k approx_top_sum array_agg array_concat_agg array_remove array_to_string
  arrayPartialShuffle arrayShuffle ascii asin atan atan2 avg avg2 bin BIT_AND BIT_OR BIT_XOR byteSlice
  byteSwap CARDINALITY CAST ceil ceiling char CHAR_LENGTH CHARACTER_LENGTH chdb coalesce concat
  concat_ws connection_id connectionId corr cos count countSubstrings COVAR_POP COVAR_SAMP CRC32
  CRC32IEEE CRC64 curdate current_database current_date current_query_id current_schemas
  current_timestamp current_user currentSchemas DATABASE DATE date_bin DATE_FORMAT DATE_TRUNC dateDiff
  dateName DAY DAYOFMONTH DAYOFWEEK DAYOFYEAR degrees dense_rank distanceCosine
  distanceCosineTransposed distanceL1 distanceL2 distanceL2Squared distanceL2Transposed distanceLinf
  distanceLp exp factorial first_value first_value_respect_nulls firstNonDefault flatten floor
  FORMAT_BYTES FQDN FROM_BASE64 FROM_DAYS FROM_UNIXTIME from_utc_timestamp greatest group_concat
  hasSubsequence hasSubsequenceCaseInsensitive hasSubsequenceCaseInsensitiveUTF8 hasSubsequenceUTF8
  hasTokenCaseInsensitive hasTokenCaseInsensitiveOrNull hex HMAC HOUR hypot if ifNull INET_ATON
  INET_NTOA INET6_ATON INET6_NTOA initcap initial_query_id initial_query_start_time instr
  isMergeTreePartCoveredBy isNull JSON_ARRAY_LENGTH kolmogorovSmirnovTest lag LAST_DAY last_value
  last_value_respect_nulls lcase lead least left length ln localtime localtimestamp locate log log10
  log2 lower lpad makeDate makeDate32 makeDateTime makeDateTime64 max max_by max2 mergeTreePartInfo
  MICROSECOND mid midpoint MILLISECOND min min_by min2 MINUTE mod modOrNull MONTH monthName NANOSECOND
  NATURAL_SORT_KEY normalizeL1 normalizeL2 normalizeLinf normalizeLp normL1 normL2 normL2Squared
  normLinf normLp not now now64 nth_value ntile nullIf OCTET_LENGTH overlay percent_rank pi pmod
  pmodOrNull position positive_modulo positive_modulo_or_null positiveModulo positiveModuloOrNull pow
  power QUARTER query_id radians rand rank REGEXP_EXTRACT regexp_instr REGEXP_MATCHES REGEXP_REPLACE
  REGEXP_SUBSTR regexpInstr repeat replace reverse revision right round row_number rpad scalarProduct
  scalarProductTransposed SCHEMA SECOND session_user sign sin soundex space sqr sqrt STD STDDEV
  STDDEV_POP STDDEV_SAMP str_to_date str_to_map string_agg subDate substr substring SUBSTRING_INDEX
  sum tan tanh time_bucket timeDiff timestamp timezone timeZone TO_BASE64 TO_DAYS TO_UNIXTIME
  to_utc_timestamp today toDecimalString trunc truncate ucase unbin unhex unnest upper user
  UTC_timestamp UTCTimestamp VAR_POP VAR_SAMP vectorDifference vectorSum version week width_bucket
  YEAR yearweek YYYYMMDDhhmmssToDateTime YYYYMMDDToDate YYYYMMDDToDate32
`);

/** Suffixes that make another aggregate of an aggregate (`sumIf`, `uniqState`, `avgOrNull`…). */
export const AGGREGATE_COMBINATORS: readonly string[] = words(
  "ArgMax ArgMin Array Distinct ForEach If Map Merge OrDefault OrNull Resample SimpleState State Tuple",
);

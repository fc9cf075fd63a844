// The shape the pages read their text in (S.start, S.words(n), S.console.tabs.feed...), built from a
// translator's t(): every text is a `ui.*` key of kiosk/locales/<lang>.json. Pure (unit-tested in Node).

export function buildStrings(tr) {
  const { t } = tr;
  const place = (table, round) =>
    round ? t("ui.place.withRound", { table, round }) : t("ui.place.noRound", { table });
  const keys = (prefix, names) => Object.fromEntries(names.map((name) => [name, t(`${prefix}.${name}`)]));
  return {
    t,
    message: tr.message,
    formatNumber: tr.formatNumber,
    formatDate: tr.formatDate,
    formatPercent: tr.formatPercent,
    has: tr.has,
    language: tr.lang,

    title: t("ui.title"),
    demo: t("ui.demo"),
    demoNote: t("ui.demoNote"),
    loading: t("ui.loading"),
    starting: t("ui.starting"),
    // A lexicon named like an edition (CSW24...) that its words are not: served only because the TD forced it.
    unverified: (claim) =>
      claim.verdict === "unknown_edition"
        ? t("ui.unverified.unknownEdition", { claimed: claim.claimed })
        : claim.any_edition
          ? t("ui.unverified.anyEdition", { claimed: claim.claimed })
          : t("ui.unverified.edition", { claimed: claim.claimed }),
    unverifiedExplain: t("ui.unverified.explain"),
    // What the registry says of a list: "matches ENABLE (172,820 words)" (the lexicon view's identification).
    edition: (view) => {
      const found = view.identification || {};
      if (!found.edition) return t("ui.edition.unknown");
      if (found.match === "match") return t("ui.edition.match", { edition: found.edition, n: view.word_count });
      if (found.match === "count_only") return t("ui.edition.countOnly", { edition: found.edition });
      return t("ui.edition.sameCount", { edition: found.edition });
    },
    words: (n) => t("ui.words", { n }),
    wordCount: (n) => t("ui.words", { n }),
    fingerprint: (short) => t("ui.fingerprint", { short }),
    fingerprintExplain: t("ui.fingerprintExplain"),
    serverOk: t("ui.serverOk"),
    serverDown: t("ui.serverDown"),
    serverProblem: t("ui.serverProblem"),
    network: t("ui.network"),
    httpStatus: (status) => t("ui.httpStatus", { status: String(status) }),

    // idle
    start: t("ui.start"),
    startHint: t("ui.startHint"),
    pickDivision: t("ui.pickDivision"),
    divisionName: (name) => t("ui.divisionName", { name }),
    divisionOption: (division, lexicon) => t("ui.divisionOption", { division, lexicon }),
    tdButton: t("ui.tdButton"),

    // challenger
    challengerTitle: t("ui.challengerTitle"),
    table: t("ui.table"),
    round: t("ui.round"),
    wordsLabel: t("ui.wordsLabel"),
    noWordsYet: t("ui.noWordsYet"),
    refusedChar: (char, lexicon) => t("ui.refusedChar", { char, lexicon }),
    tooManyWords: (max) => t("ui.tooManyWords", { max }),
    tooLong: (max) => t("ui.tooLong", { max }),
    tooShort: (min) => t("ui.tooShort", { min }),
    needTable: t("ui.needTable"),
    tableRule: t("ui.tableRule"),
    tableNumberRule: (max) => t("ui.tableNumberRule", { max: String(max) }), // a table number, not a quantity: no 9,999
    tableDigitsOnly: t("ui.tableDigitsOnly"),
    tableNameChars: t("ui.tableNameChars"),
    roundRule: t("ui.roundRule"),
    needRound: t("ui.needRound"),
    needWords: t("ui.needWords"),
    done: t("ui.done"),
    cancel: t("ui.cancel"),

    // opponent
    opponentTitle: t("ui.opponentTitle"),
    opponentHint: t("ui.opponentHint"),
    tableRound: (table, round) =>
      round ? t("ui.tableRound.withRound", { table, round }) : t("ui.tableRound.noRound", { table }),
    repeated: (word, n) => t("ui.repeated", { word, n }),
    hold: t("ui.hold"),
    holdKeys: t("ui.holdKeys"),
    keepHolding: t("ui.keepHolding"),
    abandonIn: (n) => t("ui.abandonIn", { n }),
    back: t("ui.back"),
    sending: t("ui.sending"),

    // verdict
    acceptable: t("ui.acceptable"),
    unacceptable: t("ui.unacceptable"),
    acceptableIcon: "✓",
    unacceptableIcon: "✗",
    verdictLine: (n, table, round) =>
      [
        t("ui.verdictLine.words", { n }),
        t("ui.verdictLine.table", { table }),
        round ? t("ui.verdictLine.round", { round }) : "",
      ]
        .filter(Boolean)
        .join(" · "),
    challengeId: (id, time) => t("ui.challengeId", { id: String(id), time }),
    replayed: t("ui.replayed"),
    clearsIn: (n) => t("ui.clearsIn", { n }),

    // failures
    failedTitle: t("ui.failedTitle"),
    unreachable: t("ui.unreachable"),
    comesBack: t("ui.comesBack"),
    cannotStart: t("ui.cannotStart"),
    rateLimited: (n) => t("ui.rateLimited", { n }),
    rateLimitOver: t("ui.rateLimitOver"),
    serverRefused: (message) => t("ui.serverRefused", { message }),
    retry: t("ui.retry"),
    retryNote: t("ui.retryNote"),
    settling: t("ui.settling"),
    unsettledTitle: t("ui.unsettledTitle"),
    unsettled: (table, round) => t("ui.unsettled", { place: place(table, round) }),
    settledNote: (table, round) => t("ui.settledNote", { place: place(table, round) }),
    discard: t("ui.discard"),

    // pairing and settings
    pairTitle: t("ui.pairTitle"),
    pairHint: t("ui.pairHint"),
    pairCode: t("ui.pairCode"),
    pair: t("ui.pair"),
    revoked: t("ui.revoked"),
    moved: t("ui.moved"),
    otherServer: (event) => (event ? t("ui.otherServer.withEvent", { event }) : t("ui.otherServer.noEvent")),
    otherServerHint: t("ui.otherServerHint"),
    tdTitle: t("ui.tdTitle"),
    tdName: t("ui.tdName"),
    tdPassword: t("ui.tdPassword"),
    tdUnlock: t("ui.tdUnlock"),
    settingsDivision: t("ui.settingsDivision"),
    allDivisions: t("ui.allDivisions"),
    enrolledFor: (division) => t("ui.pairedFor", { division }),
    enrolledAs: (name) => t("ui.pairedAs", { name }),
    openedBy: (td) => t("ui.openedBy", { td }),
    unpair: t("ui.unpair"),
    close: t("ui.close"),

    // the handheld
    runnerPairTitle: t("ui.runnerPairTitle"),
    runnerTitle: (name) => t("ui.runnerTitle", { name }),
    runnerPair: t("ui.runnerPair"),
    runnerRevoked: t("ui.runnerRevoked"),
    division: t("ui.division"),
    confirmPlace: (table, round, division) =>
      t("ui.confirmPlace", {
        place: round ? t("ui.tableRound.withRound", { table, round }) : t("ui.tableRound.noRound", { table }),
        division,
      }),
    checkAndSend: t("ui.checkAndSend"),
    confirmTitle: t("ui.confirmTitle"),
    send: t("ui.send"),
    edit: t("ui.edit"),
    next: t("ui.next"),
    notSent: t("ui.notSent"),
    notSentNote: t("ui.notSentNote"),
    notSentRetryNote: t("ui.notSentRetryNote"),
    notSentRateLimited: t("ui.notSentRateLimited"),
    recent: t("ui.recent"),
    noRecent: t("ui.noRecent"),
    recentLine: (id, table, n, time) =>
      t("ui.recentLine", { id: String(id), table, words: t("ui.words", { n }), time }),
    printDocket: t("ui.printDocket"),

    // docket
    docketTitle: t("ui.docket.title"),
    docketPageTitle: t("ui.docket.pageTitle"),
    docketSize: t("ui.docket.size"),
    docketSizes: keys("ui.docket.sizes", ["58mm", "80mm", "a6"]),
    docketPrint: t("ui.docket.print"),
    docketNotAllowed: t("ui.docket.notAllowed"),
    docketNoId: t("ui.docket.noId"),
    docketFacts: keys("ui.docket.facts", [
      "event",
      "division",
      "round",
      "table",
      "words",
      "verdict",
      "consequence",
      "lexicon",
      "listId",
      "time",
      "id",
      "head",
      "warning",
    ]),
    docketTitles: keys("ui.docket.titles", ["recheck", "reissue", "ruling"]),
    // The words as the slip had them, one verdict for all: "CAT QI (2 words)".
    docketWords: (words, n) => t("ui.docket.words", { words: words.join(" "), count: t("ui.words", { n }) }),
    // A re-check, reissue or ruling says which record it follows.
    docketOf: {
      recheck: (id) => t("ui.docket.of.recheck", { id: String(id) }),
      reissue: (id) => t("ui.docket.of.reissue", { id: String(id) }),
      ruling: (id) => t("ui.docket.of.ruling", { id: String(id) }),
    },
    docketFinal: t("ui.docket.final"),
    docketAwaiting: t("ui.docket.awaiting"),
    docketDecidedBy: {
      challenge: (id) => t("ui.docket.decidedBy.challenge", { id: String(id) }),
      recheck: (id) => t("ui.docket.decidedBy.recheck", { id: String(id) }),
      reissue: (id, words) => t("ui.docket.decidedBy.reissue", { id: String(id), words }),
      ruling: (verdict, name, id) => t("ui.docket.decidedBy.ruling", { verdict, name, id: String(id) }),
    },
    docketAwaitingBy: (id, verdict) => t("ui.docket.awaitingBy", { id: String(id), verdict }),
    docketLinked: t("ui.docket.linked"),
    docketStep: {
      recheck: (id, verdict) => t("ui.docket.step.recheck", { id: String(id), verdict }),
      reissue: (id, verdict, words) => t("ui.docket.step.reissue", { id: String(id), verdict, words }),
      ruling: (id, verdict, name) => t("ui.docket.step.ruling", { id: String(id), verdict, name }),
    },
    docketNotes: keys("ui.docket.notes", ["listId", "head"]),

    // the status page
    status: {
      title: t("ui.status.title"),
      heading: t("ui.status.heading"),
      checking: t("ui.status.checking"),
      running: t("ui.status.running"),
      problem: t("ui.status.problem"),
      withNotes: (state, notes) => t("ui.status.withNotes", { state, notes }),
      unreachable: (reason) => t("ui.status.unreachable", { reason }),
      demoBanner: t("ui.status.demoBanner"),
      lexicons: t("ui.status.lexicons"),
      columns: keys("ui.status.columns", ["name", "words", "edition", "fingerprint"]),
      fingerprintTitle: (fingerprint) => t("ui.status.fingerprintTitle", { fingerprint }),
      api: t("ui.status.api"),
      version: (version) => t("ui.status.version", { version }),
    },

    // device roles and the channels records came by
    role: (role) => (tr.has(`role.${role}`) ? t(`role.${role}`) : tr.message(null, role)),
    channel: (channel) => (tr.has(`ui.channel.${channel}`) ? t(`ui.channel.${channel}`) : tr.message(null, channel)),
    languageName: (lang) => t(`ui.language.${lang}`),

    console: { ...consoleStrings(tr, keys), ...recordsStrings(tr, keys) },
  };
}

function consoleStrings(tr, keys) {
  const { t } = tr;
  const c = (name, params) => t(`ui.console.${name}`, params);
  return {
    title: c("title"),
    signIn: c("signIn"),
    signInTitle: c("signInTitle"),
    signOut: c("signOut"),
    signedInAs: (name) => c("signedInAs", { name }),
    tabs: keys("ui.console.tabs", ["overview", "feed", "devices", "event", "summary"]),
    divisions: c("divisions"),
    demoEvent: (name) => c("demoEvent", { name }),
    serverId: (id) => c("serverId", { id }),
    columns: keys("ui.console.columns", [
      "division",
      "lexicon",
      "edition",
      "fingerprint",
      "rule",
      "name",
      "role",
      "address",
      "lastSeen",
      "state",
      "actions",
      "id",
      "time",
      "round",
      "table",
      "actor",
      "words",
      "verdict",
      "results",
      "consequence",
      "kind",
      "challenges",
      "acceptable",
      "share",
      "chart",
      "added",
      "by",
    ]),
    kind: (kind) => (tr.has(`ui.console.kind.${kind}`) ? c(`kind.${kind}`) : tr.message(null, kind)),
    online: c("online"),
    offline: c("offline"),
    revoked: c("revoked"),
    revokedBy: (by) => c("revokedBy", { by }),
    never: c("never"),
    anyDivision: c("anyDivision"),
    revoke: c("revoke"),
    revokeNamed: (name) => c("revokeNamed", { name }),
    revokeConfirm: (name) => c("revokeConfirm", { name }),
    alerts: c("alerts"),
    noAlerts: c("noAlerts"),
    alertLine: (time, message) => c("alertLine", { time, message }),
    alertRepeats: (n, time) => c("alertRepeats", { n, time }),
    notUsed: c("notUsed"),
    refusedFrom: (address, at) => c("refusedFrom", { address, at }),
    acceptMove: c("acceptMove"),
    acceptMoveNamed: (name) => c("acceptMoveNamed", { name }),
    acceptMoveConfirm: (name, from, to) => c("acceptMoveConfirm", { name, from, to }),
    verify: c("verify"),
    chainHead: (head) => c("chainHead", { head: head.text }),
    filters: c("filters"),
    apply: c("apply"),
    anyVerdict: c("anyVerdict"),
    device: c("device"),
    since: c("since"),
    until: c("until"),
    dateSymbols: keys("ui.console.date", ["day", "month", "year", "hour", "minute"]),
    badDate: (field, pattern) => c("badDate", { field, pattern }),
    exportCsv: c("exportCsv"),
    exportJsonl: c("exportJsonl"),
    live: c("live"),
    liveLost: c("liveLost"),
    noRecords: c("noRecords"),
    record: (id) => c("record", { id: String(id) }),
    close: c("close"),
    parent: c("parent"),
    children: c("children"),
    needsRuling: c("needsRuling"),
    chain: c("chain"),
    chainPosition: (id, hash, previous) => c("chainPosition", { id: String(id), hash, previous }),
    actorChannel: (actor, channel) => c("actorChannel", { actor, channel }),
    agrees: c("agrees"),
    yes: c("yes"),
    no: c("no"),
    recheck: c("recheck"),
    note: c("note"),
    reissue: c("reissue"),
    reason: c("reason"),
    ruling: c("ruling"),
    rulingVerdict: c("rulingVerdict"),
    done: (kind, id) => c("done", { kind, id: String(id) }),
    pairing: c("pairing"),
    pairingRole: c("pairingRole"),
    pairingName: c("pairingName"),
    createCode: c("createCode"),
    code: (code, until) => c("code", { code, until }),
    linkLoopback: (host) => c("linkLoopback", { host }),
    accounts: c("accounts"),
    addTd: c("addTd"),
    password: c("password"),
    disable: c("disable"),
    tdActive: c("tdActive"),
    tdDisabled: (time) => c("tdDisabled", { time }),
    eventSaved: c("eventSaved"),
    addDivision: c("addDivision"),
    removeDivision: c("removeDivision"),
    eventName: c("eventName"),
    language: c("language"),
    rounds: c("rounds"),
    perMinute: c("perMinute"),
    resultSeconds: c("resultSeconds"),
    save: c("save"),
    currentRound: c("currentRound"),
    setRound: c("setRound"),
    roundSet: (round) => c("roundSet", { round: String(round) }),
    roundCleared: c("roundCleared"),
    mostChallenged: c("mostChallenged"),
    mostWord: (word, n) => c("mostWord", { word, n }),
    total: c("total"),
    summaryDivision: (division) => c("summaryDivision", { division }),
    summaryRound: (division, round) => c("summaryRound", { division, round: String(round) }),
    summaryNoRound: (division) => c("summaryNoRound", { division }),
  };
}

// The feed's search and paging, final verdicts and their marks, the answers to a re-check, reissue or ruling,
// the privacy key (issue 17 items 1, 2, 7, 8).
function recordsStrings(tr, keys) {
  const { t } = tr;
  const c = (name, params) => t(`ui.console.${name}`, params);
  const id = (n) => String(n);
  return {
    search: c("search"),
    searchHint: c("searchHint"),
    find: c("find"),
    matching: (n) => c("matching", { n }),
    shown: (n) => c("shown", { n }),
    older: c("older"),
    allShown: c("allShown"),
    everyDivision: c("everyDivision"),
    notFound: (search) => c("notFound", { search }),
    keys: c("keys"),
    closeRecord: c("closeRecord"),
    final: {
      label: c("final.label"),
      ruling: (verdict, name, n) => c("final.ruling", { verdict, name, id: id(n) }),
      reissue: (words, verdict, n) => c("final.reissue", { words, verdict, id: id(n) }),
      recheck: (n) => c("final.recheck", { id: id(n) }),
      challenge: (n) => c("final.challenge", { id: id(n) }),
      awaiting: (n, verdict) => c("final.awaiting", { id: id(n), verdict }),
      pending: c("final.pending"),
      first: (verdict) => c("final.first", { verdict }),
    },
    linkedStep: (kind, n, actor, verdict) => c("linkedStep", { kind, id: id(n), actor, verdict }),
    answer: {
      recheck: (n, verdict, agrees) =>
        c(agrees ? "answer.recheckAgrees" : "answer.recheckDisagrees", { id: id(n), verdict }),
      reissue: (n, words, verdict) => c("answer.reissue", { id: id(n), words, verdict }),
      ruling: (n, verdict) => c("answer.ruling", { id: id(n), verdict }),
    },
    privacy: keys("ui.console.privacy", ["hide", "show", "hidden"]),
    finalColumns: keys("ui.console.columns", ["overturned", "awaiting"]),
    summaryFinal: c("summaryFinal"),
  };
}

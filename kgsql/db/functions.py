"""Which SQL functions LLM-written SQL may call: an allow-list, not a deny-list.

SQLite's authorizer reports every function a statement calls
(``SQLITE_FUNCTION``, with the name SQLite resolved); :mod:`kgsql.db.guard`
allows exactly the names in :data:`ALLOWED_FUNCTIONS` there, so a function
nobody reviewed (a writer added by a newer SpatiaLite, a function a caller
registered) is refused until it is added here. Two smaller lists serve the
static pre-check, which only gives clearer, earlier errors:
:data:`KNOWN_DENIED_FUNCTIONS` (SpatiaLite 5.0 functions deliberately left
out) and the file/extension patterns of :func:`is_denied_function`.

What is allowed: SQLite's core scalar, aggregate, window, date/time, JSON and
math functions and SpatiaLite's functions that compute on values (geometry
constructors, predicates, measures, transforms, unit conversions, ``Has*`` /
``*_version`` build reports, read-only lookups). What is left out:

* anything that writes or changes persistent state: metadata (``Init*``,
  ``Create*``, ``Add*GeometryColumn``, ``Register*``, ``Drop*``, ``Rename*``,
  ``Recover*``, ``Update*Statistics``, styling ``SE_*``, ``WMS_*``, GeoPackage
  ``gpkgAdd*``/``gpkgCreate*``, topology/network editors ``ST_AddIso*``,
  ``TopoGeo_*``, ``TopoNet_*``, ``ST_Cutter``, ``CreateRouting``), and
  connection settings a later query would inherit (``BufferOptions_Set*``,
  ``Enable*``/``Disable*``, ``SetDecimalPrecision``, ``Sequence_*``,
  ``AutoFDOStart``, ``AutoGPKGStart``, ``PROJ_SetDatabasePath``);
* file or extension access (``load_extension``, ``*FileFromPath``,
  ``Zipfile_*``, ``XB_Create``/``XB_SchemaValidate`` which fetch schemas),
  stored procedures (``SqlProc_*``, ``StoredProc_*``, ``StoredVar_*``), and
  ``Pause`` (sleeps);
* housekeeping checks that scan whole databases in one C call (``Check*``,
  ``rtreecheck``) and output generators whose size is a ratio of data extent
  to an argument, which no static check can bound (``ST_SquareGrid``,
  ``ST_TriangularGrid``, ``ST_HexagonalGrid``, ``ST_Segmentize``,
  ``Line_Interpolate_Equidistant_Points``), plus ``MakeStringList`` (an
  aggregate that grows outside SQLite's heap; use ``group_concat``).

Allowed functions whose cost grows with a literal argument are bounded by
:data:`ARGUMENT_MAXIMA` (checked at validation time). The names were taken
from ``PRAGMA function_list`` of SQLite 3.51 and SpatiaLite 5.0.1 and are
lowercase, as SQLite reports them to the authorizer.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from kgsql.db.engine import engine_for_dialect

__all__ = [
    "ALLOWED_FUNCTIONS",
    "ARGUMENT_MAXIMA",
    "KNOWN_DENIED_FUNCTIONS",
    "SPATIALITE_FUNCTIONS",
    "SQLITE_FUNCTIONS",
    "TABLE_VALUED_FUNCTIONS",
    "argument_problem",
    "is_allowed_function",
    "is_denied_function",
]


def _names(block: str) -> frozenset[str]:
    return frozenset(block.split())


#: SQLite core functions (operators ``->``/``->>`` and LIKE/GLOB/MATCH/REGEXP
#: reach the authorizer as functions too). Left out: load_extension,
#: fts3_tokenizer, fts5, optimize (FTS3 merge, a write), sqlite_log, rtreecheck,
#: rtreedepth, rtreenode.
SQLITE_FUNCTIONS: Final = _names(
    """
    -> ->> abs acos acosh asin asinh atan atan2 atanh avg bm25 ceil ceiling changes char
    coalesce concat concat_ws cos cosh count cume_dist current_date current_time
    current_timestamp date datetime degrees dense_rank exp first_value floor format
    fts5_get_locale fts5_insttoken fts5_locale fts5_source_id glob group_concat hex highlight if
    ifnull iif instr json json_array json_array_length json_error_position json_extract
    json_group_array json_group_object json_insert json_object json_patch json_pretty json_quote
    json_remove json_replace json_set json_type json_valid jsonb jsonb_array jsonb_extract
    jsonb_group_array jsonb_group_object jsonb_insert jsonb_object jsonb_patch jsonb_remove
    jsonb_replace jsonb_set julianday lag last_insert_rowid last_value lead length like
    likelihood likely ln log log10 log2 lower ltrim match matchinfo max median min mod nth_value
    ntile nullif octet_length offsets percent_rank percentile percentile_cont percentile_disc pi
    pow power printf quote radians random randomblob rank regexp replace round row_number rtrim
    sign sin sinh snippet soundex sqlite_compileoption_get sqlite_compileoption_used
    sqlite_offset sqlite_source_id sqlite_version sqrt strftime string_agg substr substring
    subtype sum tan tanh time timediff total total_changes trim trunc typeof unhex unicode
    unistr unistr_quote unixepoch unlikely upper zeroblob
    """
)

#: SpatiaLite 5.0 functions that only compute on their arguments or read.
SPATIALITE_FUNCTIONS: Final = _names(
    """
    addpoint area asbinary asewkb asewkt asfgf asgeojson asgml asgpb askml assvg astext astwkb
    aswkt asx3d atm_astext atm_create atm_createrotate atm_createscale atm_createtranslate
    atm_createxroll atm_createyroll atm_createzroll atm_determinant atm_invert atm_isinvertible
    atm_isvalid atm_multiply atm_rotate atm_scale atm_transform atm_translate atm_xroll
    atm_yroll atm_zroll azimuth bdmpolyfromtext bdmpolyfromwkb bdpolyfromtext bdpolyfromwkb
    boundary buffer bufferoptions_getendcapstyle bufferoptions_getjoinstyle
    bufferoptions_getmitrelimit bufferoptions_getquadrantsegments buildarea buildcirclembr
    buildmbr buildmbrfilter castautomagic casttoblob casttodouble casttogeometrycollection
    casttointeger casttolinestring casttomulti casttomultilinestring casttomultipoint
    casttomultipolygon casttopoint casttopolygon casttosingle casttotext casttoxy casttoxym
    casttoxyz casttoxyzm centroid circularity closestpoint collect collectionextract
    compressgeometry concavehull contains convexhull coorddimension cot coveredby covers
    createuuid crosses curvosityindex cvtfromch cvtfromcm cvtfromdm cvtfromfath cvtfromft
    cvtfromin cvtfromindch cvtfromindft cvtfromindyd cvtfromkm cvtfromkmi cvtfromlink cvtfrommi
    cvtfrommm cvtfromusch cvtfromusft cvtfromusin cvtfromusmi cvtfromusyd cvtfromyd cvttoch
    cvttocm cvttodm cvttofath cvttoft cvttoin cvttoindch cvttoindft cvttoindyd cvttokm cvttokmi
    cvttolink cvttomi cvttomm cvttousch cvttousft cvttousin cvttousmi cvttousyd cvttoyd
    decodeurl delaunaytriangulation difference dimension disjoint dissolvepoints
    dissolvesegments distance downhillheight encodeurl endpoint ensureclosedrings envelope
    equals extent exteriorring extractmultilinestring extractmultipoint extractmultipolygon
    filtermbrcontains filtermbrintersects filtermbrwithin forceasnull frechetdistance
    freexl_version garsmbr gcp2atm gcp_astext gcp_compute gcp_isvalid gcp_transform
    geodesicarcarea geodesicarcheight geodesicarclength geodesiccentralangle geodesicchordlength
    geodesiclength geohash geomcollfromtext geomcollfromwkb geometryaliastype
    geometrycollectionfromtext geometrycollectionfromwkb geometryconstraints geometryfromtext
    geometryfromwkb geometryn geometrypointencode geometrytype geomfromewkb geomfromewkt
    geomfromexifgpsblob geomfromfgf geomfromgeojson geomfromgml geomfromgpb geomfromkml
    geomfromtext geomfromtwkb geomfromwkb geos_getcriticalpointfrommsg geos_getlastauxerrormsg
    geos_getlasterrormsg geos_getlastwarningmsg geos_version getdbobjectscope
    getdecimalprecision getedgebypoint getfacebypoint getfontfamily getgpkgamphibiousmode
    getgpkgmode getisometadataid getlastnetworkexception getlasttopologyexception getlayerextent
    getlinkbypoint getmimetype getnetnodebypoint getnodebypoint getspatialindexextent
    getvirtualgeojsonextent getvirtualshapeextent getvirtualtableextent glength
    gpkg_isassignable gpkggetimagetype gpkggetnormalrow gpkggetnormalzoom gpkgmakepoint
    gpkgmakepointm gpkgmakepointz gpkgmakepointzm greatcirclelength gunion hasepsg hasfreexl
    hasgcp hasgeocallbacks hasgeopackage hasgeos hasgeosadvanced hasgeosonlyreentrant
    hasgeosreentrant hasgeostrunk hasgroundcontrolpoints hasiconv hasknn haslibxml2 hasmathsql
    hasminzip hasproj hasproj6 hasprojgeodesic hasrouting hasrttopo hastopology
    hausdorffdistance interiorringn intersection intersects isclosed iscompressedgeometryblob
    isdecimalnumber isempty isexifblob isexifgpsblob isfontbold isfontitalic isgeometryblob
    isgifblob isinteger isjp2blob isjpegblob islowascii isnumber ispauseenabled ispdfblob
    ispngblob ispopulatedcoverage isring issimple istiffblob istinypointblob istinypointenabled
    isvalid isvaliddetail isvalidfont isvalidgpb isvalidpixel isvalidrasterpalette
    isvalidrasterstatistics isvalidrastertile isvalidreason iswebpblob iszipblob latitudefromdms
    libxml2_version line_interpolate_point line_locate_point line_substring linefromtext
    linefromwkb linemerge linescutatnodes linesfromrings linestringavgsegmentlength
    linestringfromtext linestringfromwkb linestringmaxsegmentlength linestringminsegmentlength
    longitudefromdms longlattodms m makearc makecircle makecircularsector makecircularstripe
    makeellipse makeellipticarc makeellipticsector makeline makepoint makepointm makepointz
    makepointzm makepolygon makevalid makevaliddiscarded maxdistance mbrcontains mbrdisjoint
    mbrequal mbrintersects mbrmaxx mbrmaxy mbrminx mbrminy mbroverlaps mbrtouches mbrwithin
    md5checksum md5totalchecksum mlinefromtext mlinefromwkb mpointfromtext mpointfromwkb
    mpolyfromtext mpolyfromwkb multilinestringfromtext multilinestringfromwkb multipointfromtext
    multipointfromwkb multipolygonfromtext multipolygonfromwkb normalizelonlat numgeometries
    numinteriorring numinteriorrings numpoints offsetcurve overlaps perimeter pointfromtext
    pointfromwkb pointn pointonsurface polyfromtext polyfromwkb polygonfromtext polygonfromwkb
    polygonize proj4_version proj_asprojstring proj_aswkt proj_getdatabasepath
    proj_getlasterrormsg proj_guesssridfromwkt proj_version project ptdistwithin
    reflectcoordinates reflectcoords relate removeextraspaces removepoint removerepeatedpoints
    ringscutatnodes rl2_mapconfigurationabstractn rl2_mapconfigurationnamen
    rl2_mapconfigurationtitlen rl2_nummapconfigurations rotatecoordinates rotatecoords
    rttopo_getlasterrormsg rttopo_getlastwarningmsg rttopo_version sanitizegeometry
    scalecoordinates scalecoords selfintersections setendpoint setpoint setsrid setstartpoint
    sharedpaths shiftcoordinates shiftcoords shortestline simplify simplifypreservetopology
    singlesidedbuffer snap snapandsplit snaptogrid spatialite_target_cpu spatialite_version
    split splitleft splitright srid sridfromauthcrs sridgetaxis_1_name sridgetaxis_1_orientation
    sridgetaxis_2_name sridgetaxis_2_orientation sridgetdatum sridgetellipsoid
    sridgetprimemeridian sridgetprojection sridgetspheroid sridgetunit sridhasflippedaxes
    sridisgeographic sridisprojected st_3ddistance st_3dlength st_3dmaxdistance st_addmeasure
    st_addpoint st_area st_asbinary st_asencodedpolyline st_astext st_asx3d st_azimuth
    st_bdmpolyfromtext st_bdmpolyfromwkb st_bdpolyfromtext st_bdpolyfromwkb st_boundary
    st_buffer st_buildarea st_centroid st_closestpoint st_collect st_collectionextract
    st_concavehull st_contains st_convexhull st_coveredby st_covers st_crosses st_curvosityindex
    st_delaunaytriangulation st_difference st_dimension st_disjoint st_dissolvepoints
    st_dissolvesegments st_distance st_downhillheight st_drapeline st_drapelineexceptions
    st_endpoint st_envelope st_envelopesintersects st_envintersects st_equals st_expand
    st_exteriorring st_forcelhr st_forcepolygonccw st_forcepolygoncw st_frechetdistance
    st_generalize st_geohash st_geomcollfromtext st_geomcollfromwkb
    st_geometrycollectionfromtext st_geometrycollectionfromwkb st_geometryfromtext
    st_geometryfromwkb st_geometryn st_geometrytype st_geomfromtext st_geomfromwkb
    st_hausdorffdistance st_interiorringn st_interpolatepoint st_intersection st_intersects
    st_is3d st_isclosed st_isempty st_ismeasured st_ispolygonccw st_ispolygoncw st_isring
    st_issimple st_isvalid st_isvaliddetail st_isvalidreason st_isvalidtrajectory st_length
    st_line_interpolate_point st_line_locate_point st_line_substring st_linefromencodedpolyline
    st_linefromtext st_linefromwkb st_linemerge st_linescutatnodes st_linesfromrings
    st_linestringavgsegmentlength st_linestringfromtext st_linestringfromwkb
    st_linestringmaxsegmentlength st_linestringminsegmentlength st_locate_along_measure
    st_locate_between_measures st_locatealong st_locatebetween st_m st_makepolygon st_makevalid
    st_makevaliddiscarded st_maxdistance st_maxm st_maxx st_maxy st_maxz st_minm st_minx st_miny
    st_minz st_mlinefromtext st_mlinefromwkb st_mpointfromtext st_mpointfromwkb st_mpolyfromtext
    st_mpolyfromwkb st_multi st_multilinestringfromtext st_multilinestringfromwkb
    st_multipointfromtext st_multipointfromwkb st_multipolygonfromtext st_multipolygonfromwkb
    st_ndims st_node st_npoints st_nrings st_numgeometries st_numinteriorring st_numpoints
    st_offsetcurve st_overlaps st_perimeter st_point st_pointfromtext st_pointfromwkb st_pointn
    st_pointonsurface st_polyfromtext st_polyfromwkb st_polygonfromtext st_polygonfromwkb
    st_polygonize st_project st_relate st_relatematch st_removepoint st_reverse
    st_ringscutatnodes st_selfintersections st_setendpoint st_setpoint st_setstartpoint
    st_sharedpaths st_shift_longitude st_shortestline st_simplify st_simplifypreservetopology
    st_singlesidedbuffer st_snap st_snapandsplit st_snaptogrid st_split st_splitleft
    st_splitright st_srid st_startpoint st_subdivide st_symdifference st_touches
    st_trajectoryinterpolatepoint st_transform st_transformxy st_transformxyz st_translate
    st_unaryunion st_union st_updownheight st_uphillheight st_voronojdiagram st_within
    st_wkbtosql st_wkttosql st_x st_y st_z startpoint stddev_pop stddev_samp swapcoordinates
    swapcoords symdifference tinypointencode togars touches transform transformxy transformxyz
    unaryunion uncompressgeometry updownheight uphillheight var_pop var_samp voronojdiagram
    within x xb_compress xb_getabstract xb_getdocument xb_getdocumentsize xb_getencoding
    xb_getfileid xb_getgeometry xb_getinternalschemauri xb_getlastparseerror
    xb_getlastvalidateerror xb_getlastxpatherror xb_getname xb_getparentid xb_getpayload
    xb_getschemauri xb_gettitle xb_iscompressed xb_isgpx xb_isisometadata xb_ismapconfig
    xb_isschemavalidated xb_issldserasterstyle xb_issldsevectorstyle xb_issldstyle xb_issvg
    xb_isvalid xb_isvalidxpathexpression xb_mlinefromgpx xb_uncompress y z
    """
)

#: Table-valued functions usable in FROM (``pragma_*`` ones are checked by the
#: authorizer as pragmas, see ``kgsql.db.guard.READ_ONLY_PRAGMAS``).
TABLE_VALUED_FUNCTIONS: Final = frozenset({"json_each", "json_tree", "jsonb_each", "jsonb_tree"})

ALLOWED_FUNCTIONS: Final = SQLITE_FUNCTIONS | SPATIALITE_FUNCTIONS | TABLE_VALUED_FUNCTIONS

#: SpatiaLite 5.0 functions deliberately not allowed (see the module docstring).
KNOWN_DENIED_FUNCTIONS: Final = _names(
    """
    load_extension fts3_tokenizer fts5 optimize sqlite_log rtreecheck rtreedepth rtreenode
    readfile writefile edit sqlite_dbpage zipfile zipfile_cds fsdir lsmode
    *add-virtualtable+extent *remove-virtualtable+extent addfdogeometrycolumn addgeometrycolumn
    addtemporarygeometrycolumn autofdostart autofdostop autogpkgstart autogpkgstop
    bufferoptions_reset bufferoptions_setendcapstyle bufferoptions_setjoinstyle
    bufferoptions_setmitrelimit bufferoptions_setquadrantsegments check_strict_sql_quoting
    checkduplicaterows checkfontfacename checkgeopackagemetadata checkshadowedrowid
    checkspatialindex checkspatialmetadata checkwithoutrowid clonetable countunsafetriggers
    createclonedtable createisometadatatables creatembrcache createmetacatalogtables
    createmissingsystemtables createnetwork createrastercoveragestable createrouting
    createrouting_getlasterror createroutingnodes createspatialindex createstylingtables
    createtemporaryspatialindex createtopology createtopotables createvectorcoveragestables
    dirnamefrompath disablegpkgamphibiousmode disablegpkgmode disablepause disablespatialindex
    disabletinypoint discardfdogeometrycolumn discardgeometrycolumn dropgeotable dropnetwork
    droptable droptopology dropvirtualgeometry elementarygeometries enablegpkgamphibiousmode
    enablegpkgmode enablepause enabletinypoint fileextfrompath filenamefrompath
    fullfilenamefrompath getcuttermessage gpkgaddgeometrycolumn gpkgaddgeometrytriggers
    gpkgaddspatialindex gpkgaddtiletriggers gpkgcreatebasetables gpkgcreatetilestable
    gpkgcreatetileszoomlevel gpkginsertepsgsrid hexagonalgrid initadvancedmetadata
    initfdospatialmetadata initspatialmetadata initspatialmetadatafull insertepsgsrid
    invalidatelayerstatistics line_interpolate_equidistant_points makestringlist pause
    postgresql_getlasterror postgresql_resetlasterror postgresql_setlasterror
    proj_setdatabasepath rebuildgeometrytriggers recoverfdogeometrycolumn recovergeometrycolumn
    recoverspatialindex recreaterastercoveragestriggers recreatestylingtriggers
    recreatetopotriggers recreatevectorcoveragestriggers registerdatalicense registerisometadata
    registervirtualgeometry removeduplicaterows renamecolumn renamedatalicense renametable
    rl2_registermapconfiguration rl2_reloadmapconfiguration rl2_unregistermapconfiguration
    rtreealign se_autoregisterstandardbrushes se_registerexternalgraphic
    se_registerrastercoveragekeyword se_registerrastercoveragesrid se_registerrasterstyle
    se_registerrasterstyledlayer se_registerspatialviewcoverage se_registertopogeocoverage
    se_registertoponetcoverage se_registervectorcoverage se_registervectorcoveragekeyword
    se_registervectorcoveragesrid se_registervectorstyle se_registervectorstyledlayer
    se_registervirtualgeojsoncoverage se_registervirtualshapecoverage
    se_registervirtualtablecoverage se_reloadrasterstyle se_reloadvectorstyle
    se_setvectorcoveragecopyright se_setvectorcoverageinfos se_unregisterexternalgraphic
    se_unregisterrastercoveragekeyword se_unregisterrastercoveragesrid se_unregisterrasterstyle
    se_unregisterrasterstyledlayer se_unregistervectorcoverage
    se_unregistervectorcoveragekeyword se_unregistervectorcoveragesrid se_unregistervectorstyle
    se_unregistervectorstyledlayer se_updaterastercoverageextent se_updatevectorcoverageextent
    segmentize sequence_currval sequence_lastval sequence_nextval sequence_setval
    setdatalicenseurl setdecimalprecision sqlproc_allvariables sqlproc_cookedsql sqlproc_execute
    sqlproc_executeloop sqlproc_fromtext sqlproc_getlasterror sqlproc_getlogfile sqlproc_isvalid
    sqlproc_isvalidvarvalue sqlproc_numvariables sqlproc_rawsql sqlproc_return sqlproc_variablen
    sqlproc_varvalue squaregrid st_addedgemodface st_addedgenewfaces st_addisoedge
    st_addisonetnode st_addisonode st_addlink st_changeedgegeom st_changelinkgeom
    st_createtopogeo st_cutter st_getfaceedges st_getfacegeometry st_hexagonalgrid
    st_inittopogeo st_inittoponet st_line_interpolate_equidistant_points st_loginetfromtgeo
    st_modedgeheal st_modedgesplit st_modgeolinksplit st_modlinkheal st_modloglinksplit
    st_moveisonetnode st_moveisonode st_newedgeheal st_newedgessplit st_newgeolinksplit
    st_newlinkheal st_newloglinksplit st_remedgemodface st_remedgenewface st_remisoedge
    st_remisonetnode st_remisonode st_removelink st_segmentize st_spatnetfromgeom
    st_spatnetfromtgeo st_squaregrid st_triangulargrid st_validatetopogeo st_validlogicalnet
    st_validspatialnet storedproc_createtables storedproc_delete storedproc_execute
    storedproc_executeloop storedproc_get storedproc_register storedproc_return
    storedproc_updatesqlbody storedproc_updatetitle storedvar_delete storedvar_get
    storedvar_getvalue storedvar_register storedvar_updatetitle storedvar_updatevalue
    temporaryrtreealign topogeo_addlinestring topogeo_addlinestringnoface topogeo_addpoint
    topogeo_clone topogeo_createtopolayer topogeo_disambiguatesegmentedges
    topogeo_exporttopolayer topogeo_fromgeotable topogeo_fromgeotableext
    topogeo_fromgeotablenoface topogeo_fromgeotablenofaceext topogeo_getedgeseed
    topogeo_getfaceseed topogeo_inittopolayer topogeo_insertfeaturefromtopolayer
    topogeo_lineedgeslist topogeo_modedgeheal topogeo_modedgesplit topogeo_newedgeheal
    topogeo_newedgessplit topogeo_polyfaceslist topogeo_polygonize topogeo_removedanglingedges
    topogeo_removedanglingnodes topogeo_removesmallfaces topogeo_removetopolayer
    topogeo_snaplinetoseed topogeo_snappedgeotable topogeo_snappointtoseed
    topogeo_subdividelines topogeo_togeotable topogeo_togeotablegeneralize topogeo_toposnap
    topogeo_updateseeds toponet_clone toponet_disambiguatesegmentlinks toponet_fromgeotable
    toponet_getlinkseed toponet_linelinkslist toponet_togeotable toponet_togeotablegeneralize
    toponet_updateseeds triangulargrid unregisterdatalicense updatelayerstatistics
    updatemetacatalogstatistics upgradegeometrytriggers wms_createtables wms_defaultrefsys
    wms_defaultsetting wms_getfeatureinforequesturl wms_getmaprequesturl
    wms_registergetcapabilities wms_registergetmap wms_registerrefsys wms_registersetting
    wms_setgetcapabilitiesinfos wms_setgetmapcopyright wms_setgetmapinfos wms_setgetmapoptions
    wms_unregistergetcapabilities wms_unregistergetmap wms_unregisterrefsys
    wms_unregistersetting xb_addfileid xb_addparentid xb_cacheflush xb_create xb_schemavalidate
    xb_setfileid xb_setparentid zipfile_dbfn zipfile_numdbf zipfile_numshp zipfile_shpn
    """
)

#: Prefixes / substrings marking file access or procedures in any function name,
#: including functions of SpatiaLite builds other than the one listed above
#: (ImportSHP, ExportGeoJSON2, BlobFromFile, XB_LoadXML, ...).
_DENIED_PREFIXES: Final = (
    "import", "export", "blobtofile", "blobfromfile", "xb_loadxml", "xb_storexml",
    "sqlproc_", "storedproc_", "storedvar_", "proj_set", "sqlite_rename", "sqlite_drop",
    "st_createtopology", "st_droptopology", "st_createnetwork", "st_dropnetwork",
)
_DENIED_SUBSTRINGS: Final = ("file", "extension", "shp", "dbf", "dxf")

#: Function -> (0-based argument, largest literal allowed, what it is). The
#: argument, when present, must be a number literal no larger than the bound:
#: GEOS builds 4 * segments points per buffered vertex in one C call that
#: neither SQLite's interrupt nor its heap limit reaches (1.5 M segments took 6 s).
ARGUMENT_MAXIMA: Final[dict[str, tuple[int, float, str]]] = {
    "buffer": (2, 1000, "quadrant segments"),
    "st_buffer": (2, 1000, "quadrant segments"),
}


def is_allowed_function(name: str) -> bool:
    """True when generated SQL may call ``name`` (any case): the authorizer's test."""
    return name.strip().lower() in ALLOWED_FUNCTIONS


def is_denied_function(name: str, dialect: str = "sqlite") -> bool:
    """True when ``name`` is known not to be allowed: the static pre-check's test.

    Every engine refuses the names above (file access, extensions: a
    SpatiaLite name is as dangerous wherever a database offers it); each
    engine class adds its own prefixes (``Engine.denied_prefixes``:
    PostgreSQL's file/session/administration functions, DuckDB's file
    readers). A name this does not know is left to the engine: for SQLite,
    "no such function" when it does not exist, the authorizer's allow-list
    when it does; for the other engines, their read-only transaction or
    connection.
    """
    low = name.strip().lower()
    engine = engine_for_dialect(dialect)
    if engine is not None and engine.denied_prefixes and low.startswith(engine.denied_prefixes):
        return True
    if low in ALLOWED_FUNCTIONS:
        return False
    return low in KNOWN_DENIED_FUNCTIONS or low.startswith(_DENIED_PREFIXES) or any(
        part in low for part in _DENIED_SUBSTRINGS
    )


def argument_problem(name: str, args: Sequence[float | None]) -> str | None:
    """Why a call of ``name`` with these arguments is refused, or None.

    ``args`` holds each argument's value when it is a number literal and None
    otherwise (a column, an expression, a string).
    """
    bound = ARGUMENT_MAXIMA.get(name.strip().lower())
    if bound is None:
        return None
    index, most, what = bound
    if index >= len(args):
        return None
    value = args[index]
    if value is None:
        return f"{name}(): argument {index + 1} ({what}) must be a number literal (at most {most:g})"
    if value > most:
        return f"{name}(): {what} {value:g} exceeds the limit of {most:g}"
    return None

package io.imageworker;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.methods;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaAccess;
import com.tngtech.archunit.core.domain.JavaAnnotation;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaFieldAccess;
import com.tngtech.archunit.core.domain.JavaParameterizedType;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import io.imageworker.api.CallRate;
import io.imageworker.api.ProducerLines;
import io.imageworker.api.RequestStates;
import io.imageworker.config.WorkerConfig;
import io.imageworker.health.ConfigurationCheck;
import io.imageworker.messaging.intake.ReadAhead;
import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.messaging.offsets.PartitionWork;
import io.imageworker.messaging.offsets.RecordCopy;
import io.imageworker.messaging.parking.Parking;
import io.imageworker.messaging.results.ResultSink;
import io.imageworker.processing.RequestProcessor;
import io.imageworker.progress.RequestEvents;
import io.imageworker.progress.RequestsInProgress;
import io.imageworker.support.WorkerThreads;
import io.imageworker.testing.TestConfig;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.config.ConfigMapping;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import software.amazon.awssdk.http.nio.netty.SdkEventLoopGroup;

/**
 * The packages are layers in the order a request flows, and an import only ever points down: the console at the very
 * top (it looks at everything below and nothing uses it), Kafka in and out below it (the side topics' readers, then the consumer, its results, the read-ahead of the request lanes, the offsets),
 * the start-up and readiness checks below it (they check every setting, the console's through a check the console gives them), the HTTP status queries below them, then the orchestration, the one registry of what is in progress, the adapters and their stages below that (the gateway
 * above the spend guard and the memory budget it asks), pure image rules, the fair turns the gateway's calls and the
 * read-ahead share, shared helpers, settings, and the records of the contract at the bottom. And the tests' own layout: the test
 * infrastructure ({@code src/testing/java}) and the tests use no tool ({@code src/tools/java}), but for the
 * integration test that runs the fault suite's engine.
 */
class ArchitectureTest {

    /** Top to bottom. */
    private static final List<String> LAYERS = List.of(
            "console",
            "messaging.sidetopics",
            "messaging",
            "messaging.parking",
            "messaging.results",
            "messaging.intake",
            "messaging.offsets",
            "health",
            "api",
            "processing",
            "progress",
            "reference",
            "storage",
            "gateway",
            "spend",
            "memory",
            "net",
            "image",
            "turns",
            "support",
            "config");

    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
            .importPackages("io.imageworker");

    @Test
    void importsOnlyPointDownTheLayers() {
        LayeredArchitecture layers = layeredArchitecture().consideringOnlyDependenciesInLayers();
        for (String layer : LAYERS) {
            // The Kafka half's packages are layers of their own, each one exactly (not with its sub-packages).
            String name = "io.imageworker." + layer;
            layers = layers.layer(layer).definedBy(layer.startsWith("messaging") ? name : name + "..");
        }
        layers = layers.layer("contract").definedBy("io.imageworker.contract");
        for (int i = 0; i < LAYERS.size(); i++) {
            List<String> above = LAYERS.subList(0, i);
            layers = i == 0
                    ? layers.whereLayer(LAYERS.get(i)).mayNotBeAccessedByAnyLayer()
                    : layers.whereLayer(LAYERS.get(i)).mayOnlyBeAccessedByLayers(above.toArray(String[]::new));
        }
        layers.check(MAIN);
    }

    /**
     * Each package's settings are a mapping of their own ({@code @ConfigMapping}), and every one is listed in {@link
     * TestConfig#MAPPINGS}, through which the tests of the settings' names (docs, chart, deployments) enumerate them.
     */
    @Test
    void everySettingsMappingIsListedWhereTheNamesAreEnumerated() {
        Set<String> mappings = MAIN.stream()
                .filter(type -> type.isAnnotatedWith(ConfigMapping.class))
                .map(JavaClass::getName)
                .collect(Collectors.toSet());

        assertThat(TestConfig.MAPPINGS.stream().map(Class::getName)).containsExactlyInAnyOrderElementsOf(mappings);
    }

    /**
     * The classes that take {@link WorkerConfig} and read nothing of it themselves: {@code ReferenceLoader} hands it to
     * the {@code ReadableObjects} it makes, which reads the producers' identity.
     */
    private static final Set<String> HANDING_THE_WORKERS_SETTINGS_ON =
            Set.of("io.imageworker.reference.ReferenceLoader");

    /**
     * {@link WorkerConfig} holds no group of settings (each is a mapping of the package that owns it: {@code
     * config.TopicSettings}, {@code support.RetrySettings}, ...), and a class takes it only to read one of its own
     * top-level settings (the limits, the graces, the producers...), but those of {@link
     * #HANDING_THE_WORKERS_SETTINGS_ON}: one that reads a group injects that group's mapping instead.
     */
    @Test
    void whoTakesTheWorkersSettingsReadsOneOfItsOwn() {
        assertThat(Stream.of(WorkerConfig.class.getDeclaredMethods())
                        .filter(method -> method.getReturnType().isInterface()
                                && method.getReturnType().getPackageName().startsWith("io.imageworker"))
                        .map(Method::getName))
                .as("groups of settings WorkerConfig holds")
                .isEmpty();
        Set<String> readingNothing = MAIN.stream()
                .filter(type -> !type.getPackageName().equals("io.imageworker.config"))
                // The bundle of mappings the start-up check reads.
                .filter(type -> !type.isEquivalentTo(ConfigurationCheck.Settings.class))
                .filter(type -> type.getConstructors().stream()
                        .anyMatch(constructor -> constructor.getRawParameterTypes().stream()
                                .anyMatch(parameter -> parameter.isEquivalentTo(WorkerConfig.class))))
                .filter(type -> type.getMethodCallsFromSelf().stream()
                        .noneMatch(call -> call.getTargetOwner().isEquivalentTo(WorkerConfig.class)))
                .map(JavaClass::getName)
                .collect(Collectors.toSet());

        assertThat(readingNothing)
                .as("classes that take WorkerConfig and read none of its settings")
                .containsExactlyInAnyOrderElementsOf(HANDING_THE_WORKERS_SETTINGS_ON);
    }

    @Test
    void packagesHaveNoCycles() {
        slices().matching("io.imageworker.(*)..").should().beFreeOfCycles().check(MAIN);
    }

    /**
     * The offsets are the request topics' business alone: only the consumer ({@code messaging}), its parking ({@code
     * messaging.parking}), its results ({@code messaging.results}) and the read-ahead ({@code messaging.intake}) use
     * {@code messaging.offsets}, which uses nothing of the Kafka half (its results' transactions are seen through an
     * interface of the offsets' own); the side topics' readers have no offsets to commit.
     */
    @Test
    void onlyTheRequestTopicsUseTheOffsets() {
        String messaging = "io.imageworker.messaging";
        String offsets = messaging + ".offsets";
        noClasses()
                .that()
                .resideOutsideOfPackages(
                        messaging, messaging + ".parking", messaging + ".results", messaging + ".intake", offsets)
                .should()
                .dependOnClassesThat()
                .resideInAPackage(offsets)
                .check(MAIN);
        noClasses()
                .that()
                .resideInAPackage(offsets)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        messaging,
                        messaging + ".parking",
                        messaging + ".results",
                        messaging + ".intake",
                        messaging + ".sidetopics")
                .check(MAIN);
    }

    /**
     * The side topics' readers are the top layer but point at nothing of the consumer of the request topics: what the
     * Kafka half shares (the clients' settings) is in {@code config.KafkaClientConfig}, below both.
     */
    @Test
    void theSideTopicsUseNothingOfTheRequestTopicsConsumer() {
        noClasses()
                .that()
                .resideInAPackage("io.imageworker.messaging.sidetopics")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "io.imageworker.messaging",
                        "io.imageworker.messaging.parking",
                        "io.imageworker.messaging.intake")
                .check(MAIN);
    }

    /** The result sink (both kinds) and the transactions of the transactional one, which tell an end as they commit. */
    private static final DescribedPredicate<JavaClass> RESULT_SINK = DescribedPredicate.describe(
            "the result sink",
            type -> type.isAssignableTo(ResultSink.class)
                    || type.getName().equals("io.imageworker.messaging.results.TopicTransactions"));

    /**
     * The end of a record taken from the request topics is told by the result sink chosen at start-up alone: how it
     * ended to its partition's commits ({@code InFlight.Run.end}) and that it is in progress no more ({@code
     * InFlight.Run.finished}); a method reference counts as much as a call. Its partition hears of it from its run
     * alone.
     */
    @Test
    void onlyTheResultSinkEndsARecord() {
        noClasses()
                .that(DescribedPredicate.not(RESULT_SINK))
                .should()
                .accessTargetWhere(DescribedPredicate.describe(
                        "the end of a record's run (InFlight.Run.end or finished)",
                        access -> access.getTargetOwner().isEquivalentTo(InFlight.Run.class)
                                && Set.of("end", "finished").contains(access.getName())))
                .check(MAIN);
        noClasses()
                .that()
                .doNotBelongToAnyOf(InFlight.class)
                .should()
                .accessTargetWhere(DescribedPredicate.describe(
                        "the end of a record told to its partition (PartitionWork.ended)",
                        access -> access.getTargetOwner().isEquivalentTo(PartitionWork.class)
                                && access.getName().equals("ended")))
                .check(MAIN);
    }

    /**
     * The facts of the registry of what is in progress, each told by the one class that knows it: a record's start and
     * end by the offsets' door ({@code InFlight}, as it takes the record and as the result sink ends its run), a
     * request's work begun and over by {@code RequestProcessor} (as the request's story starts and ends), its records'
     * wait for their turn by {@code ReadAhead}, their parks by {@code Parking}. (Whether a call of a request has left
     * the registry hears from the gateway itself: {@code RequestsInProgress.Work}'s setters are private.)
     */
    private static final Map<Class<?>, Set<String>> REGISTRY_WRITERS = Map.of(
            InFlight.class, Set.of("started", "ended"),
            RequestProcessor.class, Set.of("begun", "over"),
            ReadAhead.class, Set.of("readAhead", "turnCame"),
            Parking.class, Set.of("parkUnderWay", "parkOver", "parked"));

    @Test
    void oneClassTellsTheRegistryEachKindOfWorkInProgress() {
        REGISTRY_WRITERS.forEach((writer, methods) -> noClasses()
                .that()
                .doNotBelongToAnyOf(writer)
                .should()
                .accessTargetWhere(DescribedPredicate.describe(
                        "RequestsInProgress."
                                + String.join(", ", methods.stream().sorted().toList()) + " (told by "
                                + writer.getSimpleName() + " alone)",
                        access -> !(access instanceof JavaFieldAccess)
                                && access.getTargetOwner().isEquivalentTo(RequestsInProgress.class)
                                && methods.contains(access.getName())))
                .check(MAIN));
    }

    /** Each producer's own pace, a part of the read model its package alone sees. */
    private static final String PRODUCER_PACE = "io.imageworker.api.ProducerPace";

    /**
     * The status read model and the parts of the view it holds (each producer's line, the recent rate of calls, each
     * producer's own pace).
     */
    private static final List<String> STATUS_READ_MODEL = List.of(
            RequestStates.class.getName(), ProducerLines.class.getName(), CallRate.class.getName(), PRODUCER_PACE);

    /**
     * Nothing below the HTTP status queries knows the status read model: the layers that tell it a request's course
     * know only {@link RequestEvents} (in {@code progress}), so no writer below it reaches up; the status queries
     * ({@code api}) and the console read it.
     */
    @Test
    void onlyTheStatusQueriesAndTheConsoleKnowTheStatusReadModel() {
        noClasses()
                .that()
                .resideOutsideOfPackages("io.imageworker.api..", "io.imageworker.console..")
                .should()
                .dependOnClassesThat(DescribedPredicate.describe(
                        "are the status read model or a part of it (" + String.join(", ", STATUS_READ_MODEL) + ")",
                        type -> STATUS_READ_MODEL.stream().anyMatch(part -> partOf(type, part))))
                .check(MAIN);
    }

    /** The events of {@link RequestEvents}, those of the gateway's {@code CallListener} it extends included. */
    private static final Set<String> EVENTS =
            Stream.of(RequestEvents.class.getMethods()).map(Method::getName).collect(Collectors.toUnmodifiableSet());

    /** Whether {@code origin} is an event of the read model, or a lambda written in one. */
    private static boolean inAnEvent(String origin) {
        return EVENTS.contains(origin) || EVENTS.stream().anyMatch(event -> origin.startsWith("lambda$" + event + "$"));
    }

    /**
     * The status read model has no writer but its events: it is a {@link RequestEvents}, nothing calls an event on it
     * but through that interface (nor anything but an event changes its view: its lines, its rate of calls and the
     * partitions owned), and every other public method it has answers something (a query).
     */
    @Test
    void theStatusReadModelIsWrittenThroughItsEventsAlone() {
        classes()
                .that()
                .haveFullyQualifiedName(RequestStates.class.getName())
                .should()
                .beAssignableTo(RequestEvents.class)
                .check(MAIN);
        noClasses()
                .that()
                .doNotBelongToAnyOf(RequestStates.class)
                .should()
                .accessTargetWhere(DescribedPredicate.describe(
                        "an event of the status read model called on RequestStates, not through RequestEvents",
                        access -> !(access instanceof JavaFieldAccess)
                                && access.getTargetOwner().isEquivalentTo(RequestStates.class)
                                && EVENTS.contains(access.getName())))
                .check(MAIN);
        noClasses()
                .should()
                .accessTargetWhere(DescribedPredicate.describe(
                        "a change of the status view (ProducerLines.join or leave, CallRate.started or finished,"
                                + " ProducerPace.served or finished, a map of RequestStates changed) from outside an"
                                + " event of RequestStates",
                        access -> !(access instanceof JavaFieldAccess)
                                && changesTheView(access)
                                && !(access.getOriginOwner().isEquivalentTo(RequestStates.class)
                                        && inAnEvent(access.getOrigin().getName()))))
                .check(MAIN);
        methods()
                .that()
                .areDeclaredIn(RequestStates.class)
                .and()
                .arePublic()
                .and(DescribedPredicate.describe("are not events", method -> !EVENTS.contains(method.getName())))
                .should()
                .notHaveRawReturnType(void.class)
                .check(MAIN);
    }

    /**
     * Whether {@code access} changes what the status read model holds: its lines or its rate changed from outside
     * them, or a map of its own changed.
     */
    private static boolean changesTheView(JavaAccess<?> access) {
        JavaClass from = access.getOriginOwner();
        JavaClass owner = access.getTargetOwner();
        String name = access.getName();
        if (partOf(from, ProducerLines.class) || partOf(from, CallRate.class) || partOf(from, PRODUCER_PACE)) {
            return false;
        }
        return owner.isEquivalentTo(ProducerLines.class)
                        && Set.of("join", "leave").contains(name)
                || owner.isEquivalentTo(CallRate.class)
                        && Set.of("started", "finished").contains(name)
                || owner.getName().equals(PRODUCER_PACE)
                        && Set.of("served", "finished").contains(name)
                || partOf(from, RequestStates.class)
                        && owner.isAssignableTo(Map.class)
                        && Set.of("put", "remove", "clear", "compute", "merge", "putIfAbsent")
                                .contains(name);
    }

    /** Whether {@code type} is {@code part} or one of its nested classes. */
    private static boolean partOf(JavaClass type, Class<?> part) {
        return partOf(type, part.getName());
    }

    /** Whether {@code type} is the class named {@code part} or one of its nested classes. */
    private static boolean partOf(JavaClass type, String part) {
        return type.getName().equals(part) || type.getName().startsWith(part + "$");
    }

    /**
     * The types that stand for a record or a request in progress: a record taken to run ({@code
     * RequestsInProgress.Taken}, which {@code InFlight.Run} is), its copy in the offsets ({@code RecordCopy}), a
     * request's place in progress ({@code RequestsInProgress.Place}) and its work under way ({@code
     * RequestsInProgress.Work}).
     */
    private static final Set<Class<?>> IN_PROGRESS = Set.of(
            RequestsInProgress.Taken.class,
            RequestsInProgress.Place.class,
            RequestsInProgress.Work.class,
            RecordCopy.class);

    /**
     * The classes that may keep a collection of them besides the registry, and why: each partition's offsets
     * ({@code PartitionRequests}, the copy running at each offset), which {@code PartitionWork} changes under its one
     * lock with what may be committed (the registry would split that lock).
     */
    private static final Set<String> KEEPING_OFFSETS = Set.of("io.imageworker.messaging.offsets.PartitionRequests");

    /**
     * The registry is the one holder of what is in progress: no other class has a field that is a collection, a map or
     * an array of the records or requests in progress ({@link #IN_PROGRESS}, as a map's key or value or an element),
     * but {@link #KEEPING_OFFSETS}.
     */
    @Test
    void theRegistryIsTheOnlyHolderOfWhatIsInProgress() {
        classes()
                .that()
                .doNotBelongToAnyOf(RequestsInProgress.class)
                .and(DescribedPredicate.describe(
                        "are not the offsets' own bookkeeping", type -> !KEEPING_OFFSETS.contains(type.getName())))
                .should(new ArchCondition<JavaClass>("keep no collection of the records or requests in progress") {
                    @Override
                    public void check(JavaClass type, ConditionEvents events) {
                        for (JavaField field : type.getFields()) {
                            if (holdsInProgress(field.getType())) {
                                events.add(SimpleConditionEvent.violated(
                                        field, field.getFullName() + " keeps records or requests in progress"));
                            }
                        }
                    }
                })
                .check(MAIN);
    }

    /**
     * Whether {@code type} is a collection, a map or an array that holds a type of {@link #IN_PROGRESS} (as a key, a
     * value or an element, at any depth of collections in collections).
     */
    private static boolean holdsInProgress(JavaType type) {
        JavaClass erased = type.toErasure();
        if (erased.isArray()) {
            return isOrHoldsInProgress(erased.getComponentType());
        }
        return (erased.isAssignableTo(Collection.class) || erased.isAssignableTo(Map.class))
                && type instanceof JavaParameterizedType parameterized
                && parameterized.getActualTypeArguments().stream().anyMatch(ArchitectureTest::isOrHoldsInProgress);
    }

    private static boolean isOrHoldsInProgress(JavaType type) {
        return IN_PROGRESS.stream().anyMatch(kind -> type.toErasure().isAssignableTo(kind)) || holdsInProgress(type);
    }

    /**
     * The worker's own threads are made, named and stopped in one place ({@link WorkerThreads}), which knows the order
     * they stop in at shutdown; its timers are Vert.x's. No other class makes a thread (a constructor of {@link Thread}
     * or of a subclass, a {@link ThreadFactory}'s thread, a thread started) or an executor (a constructor of an {@link
     * Executor} such as {@code ThreadPoolExecutor} or {@code ScheduledThreadPoolExecutor}, a method of {@link
     * Executors}, the S3 client's Netty event loops).
     */
    @Test
    void onlyTheOwnerOfTheThreadsMakesThreadsOrExecutors() {
        noClasses()
                .that()
                .doNotBelongToAnyOf(WorkerThreads.class)
                .should()
                .callConstructorWhere(DescribedPredicate.describe(
                        "a constructor of a Thread or an Executor",
                        call -> call.getTargetOwner().isAssignableTo(Thread.class)
                                || call.getTargetOwner().isAssignableTo(Executor.class)))
                .orShould()
                .callMethodWhere(DescribedPredicate.describe(
                        "a method of Executors, ThreadFactory.newThread, Thread.start, or one that makes Netty's event"
                                + " loops for the S3 client (SdkEventLoopGroup.builder, create, build)",
                        call -> call.getTargetOwner().isEquivalentTo(Executors.class)
                                || (call.getTargetOwner().isAssignableTo(ThreadFactory.class)
                                        && call.getName().equals("newThread"))
                                || (call.getTargetOwner().isAssignableTo(Thread.class)
                                        && call.getName().equals("start"))
                                || (call.getTargetOwner().getName().startsWith(SdkEventLoopGroup.class.getName())
                                        && Set.of("builder", "create", "build").contains(call.getName()))))
                .check(MAIN);
    }

    /** A class named in the docs: a capitalised word in backquotes. */
    private static final Pattern NAMED_CLASS = Pattern.compile("`([A-Z][A-Za-z0-9]*)`");

    /**
     * The "Follow one request" section of {@code docs/architecture.md} names the classes from a record to its
     * committed offset, in order: each one exists among the main classes (a class renamed or removed fails this), and
     * there are at most 12 of them (issue 51).
     */
    @Test
    void theFollowOneRequestSectionNamesAtMostTwelveClassesThatExist() throws IOException {
        String doc = Files.readString(Path.of("docs/architecture.md"));
        int start = doc.indexOf("\n## Follow one request\n");
        assertThat(start)
                .as("the section \"Follow one request\" of docs/architecture.md")
                .isNotNegative();
        int end = doc.indexOf("\n## ", start + 1);
        Matcher names = NAMED_CLASS.matcher(doc.substring(start, end < 0 ? doc.length() : end));
        Set<String> named = new LinkedHashSet<>();
        while (names.find()) {
            named.add(names.group(1));
        }
        Set<String> classes = MAIN.stream().map(JavaClass::getSimpleName).collect(Collectors.toSet());

        assertThat(named).as("the classes it names").isNotEmpty().hasSizeLessThanOrEqualTo(12);
        assertThat(named.stream().filter(name -> !classes.contains(name)).toList())
                .as("classes it names that are not among the main classes")
                .isEmpty();
    }

    /** The programs of {@code src/tools/java}: the fault suite's package, and the local run and the benchmarks. */
    private static final DescribedPredicate<JavaClass> TOOL = DescribedPredicate.describe(
            "a tool of src/tools/java",
            type -> type.getPackageName().equals("io.imageworker.testing.faults")
                    || Stream.of(
                                    "LocalRun",
                                    "Benchmark",
                                    "PriorityBenchmark",
                                    "ProducersBenchmark",
                                    "RebalanceBenchmark",
                                    "AotTraining",
                                    "LaunchLogging")
                            .map(name -> "io.imageworker.testing.launch." + name)
                            .anyMatch(name -> type.getName().equals(name)
                                    || type.getName().startsWith(name + "$")));

    private static final JavaClasses TESTS = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.ONLY_INCLUDE_TESTS)
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
            .importPackages("io.imageworker");

    @Test
    void onlyTheToolsAndTheIntegrationTestsUseATool() {
        noClasses()
                .that(DescribedPredicate.not(TOOL))
                .and()
                .resideOutsideOfPackage("io.imageworker.it..")
                .should()
                .dependOnClassesThat(TOOL)
                .check(TESTS);
    }

    /**
     * The unit tests' classes run side by side (junit-platform.properties), but Quarkus runs one application at a
     * time: a {@code @QuarkusTest} class running beside another would find the other's application, or none.
     */
    @Test
    void quarkusTestsRunOneAfterTheOther() {
        classes()
                .that()
                .areAnnotatedWith(QuarkusTest.class)
                .should()
                .beAnnotatedWith(DescribedPredicate.describe(
                        "@Execution(SAME_THREAD)",
                        (JavaAnnotation<?> annotation) ->
                                annotation.getRawType().isEquivalentTo(Execution.class)
                                        && annotation.as(Execution.class).value() == ExecutionMode.SAME_THREAD))
                .check(TESTS);
    }
}
